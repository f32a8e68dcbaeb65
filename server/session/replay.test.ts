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
  return { s, emit: (text: string) => ptys.last.emit(text) };
}

const text = (bytes: Uint8Array) => Buffer.from(bytes).toString("utf8");

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
