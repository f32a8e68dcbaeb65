import { describe, expect, it } from "vitest";
import { SUBMISSION_TTL_MS } from "../contract/protocol.ts";
import { SubmissionLog, type SubmissionTarget } from "./submission-log.ts";

const bytes = (s: string) => new TextEncoder().encode(s);
const text = (chunks: Uint8Array[]) => chunks.map((c) => new TextDecoder().decode(c)).join("");

function target(overrides: Partial<SubmissionTarget> = {}) {
  const written: Uint8Array[] = [];
  let release!: (ok: boolean) => void;
  const drain = new Promise<boolean>((r) => (release = r));
  const t: SubmissionTarget & { written: Uint8Array[]; release: (ok: boolean) => void } = {
    generation: "boot.1",
    running: true,
    bracketedPaste: false,
    write: (b) => void written.push(b),
    drained: () => drain,
    written,
    release,
    ...overrides,
  };
  return t;
}

const sub = (id: string, body = "hello", key = "\r", generation = "boot.1") => ({ id, generation, body: bytes(body), submitKey: bytes(key) });

describe("SubmissionLog", () => {
  it("writes body then key once, settles written after the drain, and answers repeats with the record", async () => {
    const log = new SubmissionLog();
    const t = target();
    const first = log.submit("client-a", sub("sub-00000001"), t);
    expect(first.now.map((d) => d.status)).toEqual([{ id: "sub-00000001", state: "received" }]);
    expect(text(t.written)).toBe("hello\r");
    const repeat = log.submit("client-a", sub("sub-00000001"), t);
    expect(repeat.now.map((d) => d.status.state)).toEqual(["received"]);
    expect(repeat.settled).toBeNull();
    t.release(true);
    const settled = await first.settled!;
    expect(settled.map((d) => d.status)).toEqual([{ id: "sub-00000001", state: "written" }]);
    expect(text(t.written)).toBe("hello\r");
  });

  it("tells a client that queried an in-flight submission its final state", async () => {
    const log = new SubmissionLog();
    const t = target();
    const outcome = log.submit("author", sub("sub-00000002"), t);
    expect(log.query("other-tab", ["sub-00000002", "sub-unknown1"])).toEqual([
      { id: "sub-00000002", state: "received" },
      { id: "sub-unknown1", state: "missing" },
    ]);
    t.release(true);
    const [final] = await outcome.settled!;
    expect([...final!.clients].sort()).toEqual(["author", "other-tab"]);
  });

  it("fails a wrong generation or a stopped program without writing, partial when writing broke midway", async () => {
    const log = new SubmissionLog();
    const t = target();
    expect(log.submit("c", sub("sub-gen-0001", "x", "\r", "boot.0"), t).now[0]!.status).toEqual({ id: "sub-gen-0001", state: "failed", error: "generation" });
    expect(log.submit("c", sub("sub-stop-001"), target({ running: false })).now[0]!.status).toEqual({ id: "sub-stop-001", state: "failed", error: "write" });
    expect(t.written).toEqual([]);
    let calls = 0;
    const breaking = target({ write: () => { if (calls++ > 0) throw new Error("EIO"); } });
    expect(log.submit("c", sub("sub-part-001"), breaking).now.map((d) => d.status)).toEqual([
      { id: "sub-part-001", state: "received" },
      { id: "sub-part-001", state: "partial" },
    ]);
    const gone = target();
    const outcome = log.submit("c", sub("sub-gone-001"), gone);
    gone.release(false);
    expect((await outcome.settled!)[0]!.status).toEqual({ id: "sub-gone-001", state: "partial" });
  });

  it("abandons an in-flight submission as partial once, to the author and its watchers; its drain then says nothing", async () => {
    const log = new SubmissionLog();
    const t = target();
    const outcome = log.submit("author", sub("sub-abandon-1"), t);
    log.query("other-tab", ["sub-abandon-1"]);
    const [gone] = log.abandon("sub-abandon-1");
    expect(gone!.status).toEqual({ id: "sub-abandon-1", state: "partial" });
    expect([...gone!.clients].sort()).toEqual(["author", "other-tab"]);
    expect(log.abandon("sub-abandon-1")).toEqual([]);
    expect(log.abandon("sub-unknown-1")).toEqual([]);
    t.release(true);
    expect(await outcome.settled!).toEqual([]);
    expect(log.query("author", ["sub-abandon-1"])).toEqual([{ id: "sub-abandon-1", state: "partial" }]);
  });

  it("wraps the body as a bracketed paste and removes paste markers inside it", () => {
    const log = new SubmissionLog();
    const t = target({ bracketedPaste: true });
    log.submit("c", sub("sub-paste-01", "a\nb\x1b[201~c\x1b[200~d"), t);
    expect(text(t.written)).toBe("\x1b[200~a\nbcd\x1b[201~\r");
  });

  it("forgets records past 256 and after 30 minutes", () => {
    let now = 0;
    const log = new SubmissionLog(() => now);
    for (let i = 0; i < 300; i++) log.submit("c", sub(`sub-${String(i).padStart(5, "0")}`), target());
    expect(log.size).toBe(256);
    expect(log.query("c", ["sub-00000", "sub-00044"]).map((s) => s.state)).toEqual(["missing", "received"]);
    now = SUBMISSION_TTL_MS + 1;
    expect(log.query("c", ["sub-00299"])).toEqual([{ id: "sub-00299", state: "missing" }]);
    expect(log.size).toBe(0);
  });

  it("hands body and key to writeOnce in one piece and settles with its answer; restored records are never written again", async () => {
    const log = new SubmissionLog();
    const once: { id: string; bytes: string }[] = [];
    let settle!: (state: "written" | "partial") => void;
    const t = target({
      bracketedPaste: true,
      writeOnce: (record, b) => {
        once.push({ id: record.id, bytes: new TextDecoder().decode(b) });
        return new Promise((r) => (settle = r));
      },
    });
    const outcome = log.submit("client-a", sub("id-00001"), t);
    expect(outcome.now.map((d) => d.status.state)).toEqual(["received"]);
    expect(once).toEqual([{ id: "id-00001", bytes: "\x1b[200~hello\x1b[201~\r" }]);
    expect(t.written).toEqual([]);
    settle("written");
    expect((await outcome.settled!).map((d) => d.status.state)).toEqual(["written"]);

    const restored = new SubmissionLog();
    restored.restore([{ id: "id-00002", clientId: "client-a", createdAt: Date.now(), state: "written" }]);
    const again = target();
    const repeat = restored.submit("client-a", sub("id-00002"), again);
    expect(repeat.now.map((d) => d.status.state)).toEqual(["written"]);
    expect(repeat.settled).toBe(null);
    expect(again.written).toEqual([]);
    expect(restored.query("client-b", ["id-00002", "id-00003"]).map((x) => x.state)).toEqual(["written", "missing"]);
  });
});
