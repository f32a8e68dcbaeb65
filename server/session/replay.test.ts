import { afterEach, describe, expect, it } from "vitest";
import { fakePtys } from "../testing/fake-pty.ts";
import { browserLikeTerminal, parsed, screenState, stateDifferences } from "../testing/screen-state.ts";
import type { ReplayPlan } from "./replay.ts";
import { Session } from "./session.ts";

const sessions: Session[] = [];
afterEach(async () => {
  for (const s of sessions.splice(0)) await s.dispose();
});

function session(bufferBytes = 64 * 1024, cols = 80, rows = 10) {
  const ptys = fakePtys();
  let n = 0;
  const s = new Session({ id: "s1", command: ["prog"], cwd: "/", env: {}, cols, rows, bufferBytes, spawnPty: ptys.spawn, nextGeneration: () => `boot.${++n}` });
  sessions.push(s);
  s.start();
  return { s, emit: (output: string | Uint8Array) => ptys.last.emit(output) };
}

const text = (bytes: Uint8Array) => Buffer.from(bytes).toString("utf8");
/** Bytes of a string of one-byte characters. */
const bytesOf = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));

async function snapshotOf(plan: ReplayPlan): Promise<string> {
  if (plan.mode === "append") throw new Error("not a reset");
  if ("raw" in plan) return text(plan.raw);
  const { bytes } = await plan.made;
  return typeof bytes === "string" ? bytes : text(bytes);
}

describe("Session.replay", () => {
  it("append: exactly the bytes [offset, end) of the same run", () => {
    const { s, emit } = session();
    emit("hello ");
    emit("world");
    const plan = s.replay({ generation: s.generation, offset: 6 }, { history: true });
    expect(plan.mode).toBe("append");
    expect(plan.position).toEqual({ generation: s.generation, mode: "append", start: 6, end: 11, truncated: false });
    expect(plan.mode === "append" && text(plan.bytes)).toBe("world");
    // Nothing missing: an empty append.
    const current = s.replay({ generation: s.generation, offset: 11 }, { history: true });
    expect(current.mode === "append" && current.bytes.length).toBe(0);
  });

  it("reset with the raw output [0, end) when nothing was cut and the grid never changed", () => {
    const { s, emit } = session();
    emit("\x1b[31mred\x1b[0m");
    for (const resume of [null, { generation: "other.1", offset: 3 }, { generation: s.generation, offset: 999 }]) {
      const plan = s.replay(resume, { history: true });
      expect(plan.position).toEqual({ generation: s.generation, mode: "reset", start: 0, end: 12, truncated: false });
      expect("raw" in plan && text(plan.raw)).toBe("\x1b[31mred\x1b[0m");
    }
  });

  it("reset after a resize: the terminal as it is now, not the old sizes' bytes (vim's old scroll region)", async () => {
    const { s, emit } = session(64 * 1024, 100, 30);
    const drawn = "\x1b[?1049h\x1b[1;28r\x1b[H" + "~\r\n".repeat(27) + "\x1b[30;1Hstatus";
    emit(drawn);
    s.resize(120, 40);
    // The program repaints for the new size (a new region), as vim does on SIGWINCH.
    const repaint = "\x1b[1;38r\x1b[H\x1b[2J" + "~\r\n".repeat(37) + "\x1b[40;1Hstatus";
    emit(repaint);
    const plan = s.replay(null, { history: true });
    expect(plan.position).toEqual({ generation: s.generation, mode: "reset", start: 0, end: drawn.length + repaint.length, truncated: false });
    expect("made" in plan).toBe(true);
    // A client that stayed saw the bytes at each size.
    const stayed = browserLikeTerminal(100, 30);
    stayed.write(drawn);
    await parsed(stayed);
    stayed.resize(120, 40);
    stayed.write(repaint);
    const fresh = browserLikeTerminal(120, 40);
    fresh.write(await snapshotOf(plan));
    await Promise.all([parsed(stayed), parsed(fresh)]);
    expect(stateDifferences(screenState(stayed), screenState(fresh))).toEqual([]);
    const more = "\x1b[38;1H\r\nscrolled\x1b[40;1Hstill here";
    stayed.write(more);
    fresh.write(more);
    await Promise.all([parsed(stayed), parsed(fresh)]);
    expect(stateDifferences(screenState(stayed), screenState(fresh))).toEqual([]);
  });

  it("truncated: a made snapshot as of end that counts for no offset; the program is asked to repaint only when it could not carry the screen", async () => {
    const { s, emit } = session(4096);
    for (let i = 0; i < 1000; i++) emit(`line ${i}\r\n`);
    emit("\x1b[?2004h$ ");
    const plan = s.replay(null, { history: true });
    const end = plan.position.end;
    expect(plan.position).toEqual({ generation: s.generation, mode: "reset", start: end, end, truncated: true });
    if (!("made" in plan)) throw new Error("expected a made snapshot");
    const made = await plan.made;
    expect(made.redraw).toBe(false);
    expect(String(made.bytes)).toContain("line 999");
    expect(String(made.bytes)).toContain("\x1b[?2004h");
    // ?history=0: the modes alone, and a repaint is wanted.
    const modesOnly = s.replay(null, { history: false });
    if (!("made" in modesOnly)) throw new Error("expected a made snapshot");
    expect(await modesOnly.made).toEqual({ bytes: "\x1b[?2004h", redraw: true });
    // A stale resume point of this run gets a reset too.
    expect(s.replay({ generation: s.generation, offset: 10 }, { history: true }).mode).toBe("reset");
  });

  it("a snapshot made while the output ends inside a sequence is followed by that sequence's bytes, so the rest reads as on the mirror", async () => {
    const flood = (_s: Session, emit: (output: string) => void) => Array.from({ length: 1000 }, (_, i) => emit(`line ${i}\r\n`));
    const cases: { name: string; setup: (s: Session, emit: (output: string) => void) => void; history: boolean }[] = [
      { name: "truncated", setup: flood, history: true },
      { name: "truncated, modes only", setup: flood, history: false },
      {
        name: "resized",
        setup: (s, emit) => {
          emit("before");
          s.resize(60, 10);
        },
        history: true,
      },
    ];
    const han = new TextEncoder().encode("漢");
    // What the program wrote up to the reset, what after it, and what the line then shows.
    const splits: [string, Uint8Array, Uint8Array, string][] = [
      ["a colour split by a line feed", bytesOf("\r\n\x1b[3\r\n"), bytesOf("1mred"), "red"],
      ["half a title", bytesOf("\r\n\x1b]0;half a ti"), bytesOf("tle\x07after"), "after"],
      ["two bytes of 漢", new Uint8Array([0x0d, 0x0a, han[0]!, han[1]!]), new Uint8Array([han[2]!, 0x21]), "漢!"],
    ];
    for (const { name, setup, history } of cases) {
      const { s, emit } = session(4096);
      setup(s, emit);
      for (const [what, before, after, shown] of splits) {
        emit(before);
        const plan = s.replay(null, { history });
        if (!("made" in plan)) throw new Error("expected a made snapshot");
        const { bytes } = await plan.made;
        const client = browserLikeTerminal(s.cols, s.rows);
        client.write(typeof bytes === "string" ? new TextEncoder().encode(bytes) : bytes);
        client.write(after);
        emit(after);
        await parsed(client);
        const buffer = client.buffer.active;
        const line = buffer.getLine(buffer.baseY + buffer.cursorY)!;
        expect(line.translateToString(true), `${name}: ${what}`).toBe(shown);
        if (what.startsWith("a colour")) expect(line.getCell(0)!.getFgColor(), `${name}: ${what}`).toBe(1);
      }
    }
  });

  it("a resume point from before a resize gets the terminal as it is; one after it still appends", async () => {
    const { s, emit } = session();
    emit("before ");
    s.resize(100, 20);
    emit("after");
    const behind = s.replay({ generation: s.generation, offset: 3 }, { history: true });
    expect(behind.position).toMatchObject({ mode: "reset", start: 0, truncated: false });
    expect("made" in behind).toBe(true);
    const caughtUp = s.replay({ generation: s.generation, offset: 7 }, { history: true });
    expect(caughtUp.mode === "append" && text(caughtUp.bytes)).toBe("after");
  });
});
