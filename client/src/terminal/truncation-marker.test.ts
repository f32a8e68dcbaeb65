import headless from "@xterm/headless";
import { describe, expect, it } from "vitest";
import { terminalSnapshot } from "../../../server/vt/terminal-snapshot.js";
import { TRUNCATION_MARKER, truncationMarkerSequence } from "./truncation-marker.ts";

const RIS = "\x1bc";
type Term = InstanceType<typeof headless.Terminal>;

function terminal(): Term {
  return new headless.Terminal({ cols: 40, rows: 6, scrollback: 100, allowProposedApi: true });
}
const write = (term: Term, data: string) => new Promise<void>((resolve) => term.write(data, resolve));
const lines = (term: Term, from: number, to: number) => {
  const out: string[] = [];
  for (let y = from; y < to; y++) out.push(term.buffer.active.getLine(y)?.translateToString(true) ?? "");
  return out;
};
const screen = (term: Term) => lines(term, term.buffer.active.baseY, term.buffer.active.baseY + term.rows);

describe("the truncation marker", () => {
  it("lands in the history only: a screen that never scrolls keeps its rows, and later updates by row land where the program meant", async () => {
    const program = terminal();
    // A progress display that redraws in place: never scrolls, so the snapshot has no history.
    await write(program, "\x1b[H\x1b[2Jbuild  [##   ]\r\ntests  [     ]\r\n");
    const rejoined = terminal();
    await write(rejoined, RIS + truncationMarkerSequence(rejoined.rows) + terminalSnapshot(program));
    expect(screen(rejoined)).toEqual(screen(program));
    expect(rejoined.buffer.active.cursorY).toBe(program.buffer.active.cursorY);
    expect(lines(rejoined, 0, rejoined.buffer.active.baseY)).toEqual([TRUNCATION_MARKER]);
    // More output: absolute (CUP) and relative (cursor up) updates.
    const more = "\x1b[1;9H####\x1b[3;1H\x1b[1Atests  [#    ]\r\n";
    await write(program, more);
    await write(rejoined, more);
    expect(screen(rejoined)).toEqual(screen(program));
    expect(screen(rejoined).join("\n")).not.toContain(TRUNCATION_MARKER);
  });

  it("sits above the snapshot's own history", async () => {
    const program = terminal();
    for (let i = 1; i <= 10; i++) await write(program, `line ${i}\r\n`);
    const rejoined = terminal();
    await write(rejoined, RIS + truncationMarkerSequence(rejoined.rows) + terminalSnapshot(program));
    const history = lines(rejoined, 0, rejoined.buffer.active.baseY);
    expect(history[0]).toBe(TRUNCATION_MARKER);
    expect(history.slice(1)).toEqual(lines(program, 0, program.buffer.active.baseY));
    expect(screen(rejoined)).toEqual(screen(program));
  });
});
