import { describe, expect, it } from "vitest";
import { decodeChatServerEvent, type ChatServerEvent } from "../../../server/contract/chat.ts";
import { applyChatEvent, EMPTY_CHAT_STATE, isBusy, shownParts, toolCallIds, toolResults, type ChatState } from "./chat-state.ts";

/** Events as they come off the socket: JSON text through the contract's decoder. */
function wire(...events: object[]): ChatServerEvent[] {
  return events.map((e) => {
    const decoded = decodeChatServerEvent(JSON.stringify(e));
    if (decoded.type === "invalid") throw new Error(`test event breaks the contract: ${decoded.detail}`);
    return decoded;
  });
}

function feed(events: ChatServerEvent[], from: ChatState = EMPTY_CHAT_STATE): ChatState {
  return events.reduce(applyChatEvent, from);
}

const T0 = 1_700_000_000_000;
const user = (id: string, text: string) => ({ id, role: "user", parts: [{ type: "text", text }], createdAt: T0, turnId: "send-00000001" });
const idle = { state: "idle" };
const hello = { type: "hello", protocol: "webmux-chat/1", sessionId: "abcd1234", agent: "claude", conversationId: "c1", end: "chat", caps: { permissions: true, interrupt: true } };
const snapshot = (seq: number, messages: object[] = [], extra: object = {}) => ({ type: "snapshot", seq, messages, permissions: [], status: idle, ...extra });

/** The transcript as "role: text" lines, the way a reader sees it. */
const lines = (state: ChatState) => state.messages.flatMap((m) => m.parts.map((p) => `${m.role}: ${"text" in p ? p.text : p.type}`));

describe("applyChatEvent", () => {
  it("applies a snapshot, then upserts and deltas in order, and remembers the last seq", () => {
    const state = feed(
      wire(
        hello,
        { type: "control", controller: null },
        snapshot(10, [user("u1", "fix the build")]),
        { type: "turn", seq: 11, turnId: "send-00000001", phase: "start" },
        { type: "message", seq: 12, message: { id: "msg_1", role: "assistant", parts: [{ type: "text", text: "" }], createdAt: T0 + 1 } },
        { type: "delta", seq: 13, messageId: "msg_1", part: 0, text: "Runn" },
        { type: "delta", seq: 14, messageId: "msg_1", part: 0, text: "ing make." },
      ),
    );
    expect(state.hello?.conversationId).toBe("c1");
    expect(state.lastSeq).toBe(14);
    expect(lines(state)).toEqual(["user: fix the build", "assistant: Running make."]);
    expect(isBusy(state)).toBe(true);

    // The final upsert replaces the streamed message where it stands; a new id joins the end.
    const after = feed(
      wire(
        { type: "message", seq: 15, message: { id: "msg_1", role: "assistant", parts: [{ type: "text", text: "Running `make`." }], createdAt: T0 + 1 } },
        { type: "message", seq: 16, message: { id: "msg_2", role: "assistant", parts: [{ type: "text", text: "Done." }], createdAt: T0 + 2 } },
        { type: "turn", seq: 17, turnId: "send-00000001", phase: "end", status: "success", costUsd: 0.0012 },
      ),
      state,
    );
    expect(lines(after)).toEqual(["user: fix the build", "assistant: Running `make`.", "assistant: Done."]);
    expect(after.lastTurn).toEqual({ turnId: "send-00000001", status: "success", costUsd: 0.0012 });
    expect(isBusy(after)).toBe(false);
  });

  it("ignores journal events it has applied already (a replay that overlaps)", () => {
    const streamed = wire(
      snapshot(1, [{ id: "msg_1", role: "assistant", parts: [{ type: "text", text: "He" }], createdAt: T0 }]),
      { type: "delta", seq: 2, messageId: "msg_1", part: 0, text: "llo" },
    );
    const state = feed(streamed);
    const again = feed(wire({ type: "delta", seq: 2, messageId: "msg_1", part: 0, text: "llo" }), state);
    expect(again).toBe(state);
    expect(lines(again)).toEqual(["assistant: Hello"]);
  });

  it("a snapshot replaces everything, even one from a new server run with a lower seq", () => {
    const before = feed(
      wire(
        snapshot(50, [user("u1", "old")], { inflight: { turnId: "send-00000001", messageId: null }, permissions: [{ requestId: "r1", tool: "Bash", input: {} }] }),
        { type: "status", seq: 51, state: "awaiting_permission" },
      ),
    );
    expect(isBusy(before)).toBe(true);
    const after = feed(wire(snapshot(3, [user("u2", "new")])), before);
    expect(lines(after)).toEqual(["user: new"]);
    expect(after.permissions).toEqual([]);
    expect(after.inflight).toBeNull();
    expect(after.status).toEqual(idle);
    expect(after.lastSeq).toBe(3);
    expect(isBusy(after)).toBe(false);
    // And events after it apply again.
    expect(lines(feed(wire({ type: "message", seq: 4, message: user("u3", "next") }), after))).toEqual(["user: new", "user: next"]);
  });

  it("opens permission requests and resolves them with who answered; a late duplicate answer changes nothing", () => {
    const state = feed(
      wire(
        snapshot(1),
        { type: "permission.request", seq: 2, requestId: "r1", tool: "Bash", input: { command: "make" }, toolUseId: "toolu_1" },
        { type: "permission.request", seq: 3, requestId: "r2", tool: "Edit", input: { file_path: "a.ts" } },
        { type: "permission.resolved", seq: 4, requestId: "r1", decision: "allow", by: { clientId: "tab-1", label: "phone" } },
        { type: "permission.resolved", seq: 5, requestId: "r1", decision: "deny", by: { clientId: "tab-2", label: "desk" } },
      ),
    );
    expect(state.permissions.map((p) => p.requestId)).toEqual(["r2"]);
    expect(state.resolved.r1).toEqual({ requestId: "r1", tool: "Bash", input: { command: "make" }, toolUseId: "toolu_1", decision: "allow", by: { clientId: "tab-1", label: "phone" } });
    const canceled = feed(wire({ type: "permission.resolved", seq: 6, requestId: "r2", decision: "canceled", by: null }), state);
    expect(canceled.permissions).toEqual([]);
    expect(canceled.resolved.r2).toMatchObject({ decision: "canceled", by: null });
  });

  it("tracks status, turns and refusals for the status line", () => {
    const state = feed(
      wire(
        snapshot(1),
        { type: "turn", seq: 2, turnId: "send-00000002", phase: "start" },
        { type: "status", seq: 3, state: "busy" },
        { type: "error", code: "BUSY", message: "the agent is busy" },
        { type: "turn", seq: 4, turnId: "send-00000002", phase: "end", status: "interrupted" },
        { type: "status", seq: 5, state: "parked", error: "the chat end failed to start" },
      ),
    );
    expect(state.lastTurn).toEqual({ turnId: "send-00000002", status: "interrupted" });
    expect(state.status).toEqual({ state: "parked", error: "the chat end failed to start" });
    expect(state.refused).toEqual({ code: "BUSY", message: "the agent is busy" });
    expect(isBusy(state)).toBe(false);
    // A new connection's hello clears the refusal; submissions are the outbox's and change nothing.
    const next = feed(wire(hello), state);
    expect(next.refused).toBeNull();
    expect(feed(wire({ type: "submission", id: "send-00000003", state: "written" }), next)).toBe(next);
  });

  it("asks for a resync when a delta names a part it does not hold, and a snapshot clears that", () => {
    const state = feed(wire(snapshot(1), { type: "delta", seq: 2, messageId: "msg_9", part: 0, text: "x" }));
    expect(state.stale).toBe(true);
    expect(state.lastSeq).toBe(2);
    expect(feed(wire(snapshot(2)), state).stale).toBe(false);
    // A delta for a tool call part is as wrong as one for a missing message.
    const tool = feed(wire(snapshot(1, [{ id: "m", role: "assistant", parts: [{ type: "tool_call", toolUseId: "t", name: "Bash", input: {} }], createdAt: T0 }]), { type: "delta", seq: 2, messageId: "m", part: 0, text: "x" }));
    expect(tool.stale).toBe(true);
  });

  it("keeps untouched messages and parts as they were, so the view redraws only what changed", () => {
    const state = feed(
      wire(snapshot(1, [user("u1", "hi"), { id: "msg_1", role: "assistant", parts: [{ type: "thinking", text: "hm" }, { type: "text", text: "He" }], createdAt: T0 }])),
    );
    const next = feed(wire({ type: "delta", seq: 2, messageId: "msg_1", part: 1, text: "llo" }), state);
    expect(next.messages[0]).toBe(state.messages[0]);
    expect(next.messages[1]!.parts[0]).toBe(state.messages[1]!.parts[0]);
    expect(next.messages[1]!.parts[1]).toEqual({ type: "text", text: "Hello" });
    expect(state.messages[1]!.parts[1]).toEqual({ type: "text", text: "He" });
  });
});

describe("tool results", () => {
  it("fold into the call they answer; a result without its call stays on its own", () => {
    const state = feed(
      wire(
        snapshot(1, [
          { id: "msg_1", role: "assistant", parts: [{ type: "text", text: "Running." }, { type: "tool_call", toolUseId: "toolu_1", name: "Bash", input: { command: "make" } }], createdAt: T0 },
          { id: "tr-toolu_1", role: "user", parts: [{ type: "tool_result", toolUseId: "toolu_1", content: "ok", isError: false }], createdAt: T0 + 1 },
          { id: "tr-toolu_0", role: "user", parts: [{ type: "tool_result", toolUseId: "toolu_0", content: "orphan", isError: true }], createdAt: T0 + 2 },
        ]),
      ),
    );
    const calls = toolCallIds(state.messages);
    expect(toolResults(state.messages).get("toolu_1")).toEqual({ type: "tool_result", toolUseId: "toolu_1", content: "ok", isError: false });
    expect(state.messages.map((m) => shownParts(m, calls).map((p) => p.type))).toEqual([["text", "tool_call"], [], ["tool_result"]]);
  });
});
