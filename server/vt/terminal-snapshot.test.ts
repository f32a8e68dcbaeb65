import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { browserLikeTerminal, parsed, screenState, stateDifferences } from "../testing/screen-state.ts";
import { terminalOutput } from "../testing/vt-grammar.ts";
import { terminalSnapshot } from "./terminal-snapshot.js";

const RIS = "\x1bc";

type Term = ReturnType<typeof browserLikeTerminal>;

async function program(output: string, cols = 40, rows = 10): Promise<{ term: Term; snapshot: () => string }> {
  const term = browserLikeTerminal(cols, rows, 1000);
  term.write(output);
  await parsed(term);
  return { term, snapshot: () => terminalSnapshot(term) };
}

/** The program's terminal and a fresh one fed its snapshot agree, and still after `more`. */
async function expectFaithful(output: string, more: string, size: { cols: number; rows: number } = { cols: 40, rows: 10 }): Promise<void> {
  const original = await program(output, size.cols, size.rows);
  const restored = browserLikeTerminal(size.cols, size.rows, 1000);
  restored.write(RIS + original.snapshot());
  await parsed(restored);
  expect(stateDifferences(screenState(original.term), screenState(restored)), "after the snapshot").toEqual([]);
  original.term.write(more);
  restored.write(more);
  await Promise.all([parsed(original.term), parsed(restored)]);
  expect(stateDifferences(screenState(original.term), screenState(restored)), "after more output").toEqual([]);
}

const lines = (n: number, prefix = "line") => Array.from({ length: n }, (_, i) => `${prefix} ${i + 1}`).join("\r\n") + "\r\n";

describe("terminalSnapshot reproduces the terminal's state", () => {
  it("screen, history, colours and the cursor", async () => {
    await expectFaithful(`${lines(30)}\x1b[1;31mred\x1b[0m \x1b[38;2;1;2;3;48;5;200mtrue\x1b[0m\x1b[3;5H`, "x\x1b[Bmore");
  });

  it("a scroll region (a status bar below output that keeps scrolling)", async () => {
    await expectFaithful(`${lines(3)}\x1b[10;1H\x1b[7mstatus 10%\x1b[0m\x1b[1;9r\x1b[9;1H`, lines(20, "more") + "\x1b[10;1H\x1b[7mstatus 90%\x1b[0m\x1b[9;1H");
  });

  it("origin mode set after drawing, with the cursor inside the region", async () => {
    await expectFaithful(`${lines(5)}\x1b[3;8r\x1b[?6h\x1b[2;4Hin`, "\x1b[1;1Htop\x1b[20;1Hbottom\r\nscrolls");
  });

  it("DEC line drawing: designated in G0 and G1, with SO in force", async () => {
    await expectFaithful("\x1b(0lqqk\x1b(B plain \x1b)0\x0elqk", "lqqqk\x0fx\x1b(0mqj");
  });

  it("a link left open (OSC 8): what is printed next is linked too", async () => {
    await expectFaithful("\x1b]8;;http://x\x1b\\open ", "still linked\x1b]8;;\x1b\\ plain");
    await expectFaithful("\x1b]8;id=7;http://y\x07\x1b[1;31mred link", " more\x1b]8;;\x07 plain");
  });

  it("insert mode", async () => {
    await expectFaithful("abcdef\x1b[4h\x1b[1;3H", "XY");
  });

  it("a wrap pending after the last column", async () => {
    await expectFaithful(`${"x".repeat(39)}y`, "z");
    await expectFaithful(`${"x".repeat(38)}\u{1F600}`, "z");
  });

  it("autowrap off at the right margin", async () => {
    await expectFaithful(`\x1b[?7l${"x".repeat(39)}y`, "zw");
  });

  it("the alternate screen with a saved cursor in each buffer, and the normal screen under it", async () => {
    await expectFaithful(`${lines(15)}\x1b[3;7H\x1b[1m\x1b7\x1b[0m\x1b[5;2H\x1b[?1049h\x1b[2;2Halt\x1b[4;4H\x1b[4m\x1b7\x1b[0m\x1b[8;8H`, "\x1b8u\x1b[?1049l\x1b8restored");
  });

  it("modes a program set: mouse, bracketed paste, focus, application cursor and keypad, hidden cursor, cursor style", async () => {
    await expectFaithful("\x1b[?1002h\x1b[?1006h\x1b[?2004h\x1b[?1004h\x1b[?1h\x1b=\x1b[?25l\x1b[5 q$ ", "ok");
  });

  it("tab stops", async () => {
    await expectFaithful("\x1b[3g\x1b[1;4H\x1bH\x1b[1;20H\x1bH\x1b[2;1H", "\ta\tb\tc");
  });

  it("the pen, with underline style and colour", async () => {
    await expectFaithful("plain \x1b[4:3;58;2;255;0;0;1;3m", "curly");
  });

  it("wide characters (CJK and emoji) and text placed after them by column", async () => {
    await expectFaithful("漢字\u{1F600}\u{1F600}\x1b[20GMARK\r\n", "\u{1F600}x\x1b[20Gy");
  });

  it("any output from a grammar of text and control sequences (property)", async () => {
    const output = terminalOutput();
    await fc.assert(
      fc.asyncProperty(output, output, async (before, after) => {
        await expectFaithful(before, after, { cols: 20, rows: 6 });
      }),
      // A fixed seed: the same 500 cases every run (rarer shapes are listed in docs/design.md § Snapshots).
      { numRuns: 500, seed: 16 },
    );
  });
});
