import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { decodeChatServerEvent, type ChatJournalEvent, type ChatMessage } from "../contract/chat.ts";
import { ChatJournal, DELTA_COALESCE_MS, REPLAY_EVENTS } from "./chat-journal.ts";

const decode = (text: string) => decodeChatServerEvent(text) as ChatJournalEvent;
const assistant = (id: string, text: string): ChatMessage => ({ id, role: "assistant", parts: [{ type: "text", text }], createdAt: 1 });

let journal: ChatJournal;
let sent: ChatJournalEvent[];
beforeEach(() => {
  vi.useFakeTimers();
  journal = new ChatJournal();
  sent = [];
  journal.subscribe((text) => sent.push(decode(text)));
});
afterEach(() => {
  journal.dispose();
  vi.useRealTimers();
});

describe("ChatJournal", () => {
  it("gathers deltas for ~50 ms into one event per part, in order with everything else", () => {
    journal.upsert(assistant("m1", ""));
    for (const piece of ["Hel", "lo", ", ", "world"]) journal.delta("m1", 0, piece);
    expect(sent.map((e) => e.type)).toEqual(["message"]);
    vi.advanceTimersByTime(DELTA_COALESCE_MS);
    expect(sent.at(-1)).toMatchObject({ type: "delta", messageId: "m1", part: 0, text: "Hello, world" });
    journal.delta("m1", 0, "!");
    journal.setStatus({ state: "busy" });
    // The pending delta goes out before the status, so order is kept without waiting.
    expect(sent.slice(-2).map((e) => e.type)).toEqual(["delta", "status"]);
    expect(sent.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
  });

  it("sends deltas for an older version of a message before the new version replaces it", () => {
    journal.upsert(assistant("m1", ""));
    journal.delta("m1", 0, "partial");
    journal.upsert(assistant("m1", "partial text, final"));
    expect(sent.map((e) => e.type)).toEqual(["message", "delta", "message"]);
    const snapshot = decode(journal.snapshot());
    expect(snapshot).toMatchObject({ type: "snapshot", seq: 3, messages: [assistant("m1", "partial text, final")] });
  });

  it("drops deltas for a message or part it does not hold", () => {
    journal.delta("nope", 0, "x");
    journal.upsert({ id: "m1", role: "assistant", parts: [{ type: "tool_call", toolUseId: "t", name: "Bash", input: {} }], createdAt: 1 });
    journal.delta("m1", 0, "x");
    journal.delta("m1", 5, "x");
    vi.advanceTimersByTime(DELTA_COALESCE_MS);
    expect(sent.map((e) => e.type)).toEqual(["message"]);
  });

  it("describes in a snapshot exactly the state after its seq, and replays exactly the events after a since", () => {
    journal.upsert(assistant("m1", ""));
    journal.turnStarted("t1");
    journal.delta("m1", 0, "abc");
    journal.permissionRequested({ requestId: "r1", tool: "Bash", input: { command: "ls" } });
    const snapshot = decode(journal.snapshot());
    expect(snapshot).toEqual({
      type: "snapshot",
      seq: 4,
      messages: [assistant("m1", "abc")],
      inflight: { turnId: "t1", messageId: null },
      permissions: [{ requestId: "r1", tool: "Bash", input: { command: "ls" } }],
      status: { state: "parked" },
    });
    expect(journal.permissionResolved("r1", "allow", { clientId: "c-0000001", label: "" })).toBe(true);
    expect(journal.permissionResolved("r1", "deny", { clientId: "c-0000002", label: "" })).toBe(false);
    journal.turnEnded("success", 0.5);
    expect(journal.replay(4)!.map((t) => decode(t).type)).toEqual(["permission.resolved", "turn"]);
    expect(journal.replay(journal.lastSeq)).toEqual([]);
    expect(journal.replay(journal.lastSeq + 1)).toBeNull();
  });

  it("replays only what its ring still holds, and nothing from before a reset", () => {
    for (let i = 0; i < REPLAY_EVENTS + 10; i++) journal.setStatus({ state: i % 2 ? "busy" : "idle" });
    expect(journal.replay(5)).toBeNull();
    expect(journal.replay(journal.lastSeq - 3)).toHaveLength(3);
    const before = journal.lastSeq;
    journal.reset([assistant("m9", "from the transcript")]);
    expect(journal.replay(before)).toBeNull();
    expect(decode(journal.snapshot())).toMatchObject({ messages: [assistant("m9", "from the transcript")] });
  });
});
