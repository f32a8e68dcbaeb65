import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CHAT_PROTOCOL } from "../contract/chat.ts";
import { CloseCode } from "../contract/protocol.ts";
import type { ChatClient } from "../testing/chat-client.ts";
import { maxConcurrentAgents, startHybridFixture, type HybridFixture } from "../testing/hybrid-fixture.ts";

let fx: HybridFixture;
beforeEach(async () => {
  fx = await startHybridFixture();
});
afterEach(async () => {
  await fx.stop();
});

/** A session parked at its chat end with a chat client attached and the agent started. */
async function chatSession(options: { client?: string; env?: Record<string, string> } = {}) {
  const info = await fx.create({ hybrid: { end: "chat" }, env: options.env });
  const chat = await fx.chat(info.id, { client: options.client ?? "client-a-0001", label: "phone" });
  await chat.until((c) => c.status?.state === "idle", "the chat end started");
  return { info, chat };
}

function turnEnds(chat: ChatClient) {
  return chat.of("turn").filter((t) => t.phase === "end");
}

describe("/ws/s/{id}/chat", () => {
  it("greets with hello, control and a snapshot; a parked session starts its agent on attach", async () => {
    const info = await fx.create({ hybrid: { end: "chat" } });
    expect(info.hybrid).toMatchObject({ end: "chat", state: "parked" });
    const chat = await fx.chat(info.id, { client: "client-a-0001", label: "phone" });
    await chat.until((c) => c.status?.state === "idle", "the chat end started");
    expect(chat.events.slice(0, 3).map((e) => e.type)).toEqual(["hello", "control", "snapshot"]);
    expect(chat.hello).toEqual({
      type: "hello",
      protocol: CHAT_PROTOCOL,
      sessionId: info.id,
      agent: "claude",
      conversationId: info.hybrid!.conversationId,
      end: "chat",
      caps: { permissions: true, interrupt: true },
    });
    expect(chat.controller).toMatchObject({ clientId: "client-a-0001", label: "phone" });
    expect((await fx.hybrid(info.id)).state).toBe("idle");
    // The session list shows the end and the state.
    const list = (await (await fx.server.api("/api/sessions")).json()) as { sessions: { id: string; hybrid?: unknown }[] };
    expect(list.sessions.find((s) => s.id === info.id)?.hybrid).toMatchObject({ end: "chat", state: "idle" });
  });

  it("runs a turn from send: received, written, streamed text coalesced into few deltas, a turn with its cost", async () => {
    const { chat } = await chatSession();
    const text = "streamed ".repeat(30).trim();
    chat.send("send-0000001", `say ${text}`);
    await chat.until((c) => turnEnds(c).length === 1, "the turn ended");
    expect(chat.submissionStates("send-0000001")).toEqual(["received", "written"]);
    expect(chat.transcript()).toEqual([`user: say ${text}`, `assistant: ${text}`]);
    // The fake streams 4 characters every 5 ms; the server sends them gathered over ~50 ms.
    const deltas = chat.of("delta");
    expect(deltas.length).toBeGreaterThan(0);
    expect(deltas.length).toBeLessThan(text.length / 4 / 2);
    expect(turnEnds(chat)[0]).toMatchObject({ turnId: "send-0000001", status: "success", costUsd: 0.0012 });
    const seqs = chat.events.flatMap((e) => ("seq" in e ? [e.seq] : []));
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
  });

  it("runs one turn for two sends with one id, and answers a later repeat with its recorded state", async () => {
    const { chat } = await chatSession();
    chat.send("twice-000001", "say once");
    chat.send("twice-000001", "say once");
    await chat.until((c) => turnEnds(c).length === 1, "the turn ended");
    chat.send("twice-000001", "say once");
    await chat.until((c) => c.submissionStates("twice-000001").filter((s) => s === "written").length === 2, "the repeat answered");
    expect(chat.of("turn").filter((t) => t.phase === "start")).toHaveLength(1);
    expect(chat.transcript().filter((l) => l === "user: say once")).toHaveLength(1);
    expect(chat.submissionStates("twice-000001")).toEqual(["received", "received", "written", "written"]);
    expect(await fx.hybrid(chat.hello!.sessionId)).toMatchObject({ state: "idle" });
  });

  it("queues sends in order while the agent is busy", async () => {
    const { chat } = await chatSession();
    chat.send("order-000001", "say first; slow 1");
    chat.send("order-000002", "say second");
    await chat.until((c) => turnEnds(c).length === 2, "both turns ended");
    expect(chat.transcript().filter((l) => !l.includes("Working"))).toEqual(["user: say first; slow 1", "assistant: first", "user: say second", "assistant: second"]);
    expect(turnEnds(chat).map((t) => t.turnId)).toEqual(["order-000001", "order-000002"]);
  });

  it("resolves a permission request answered from one client in the other; the first answer wins", async () => {
    const { info, chat: a } = await chatSession();
    const b = await fx.chat(info.id, { client: "client-b-0002", label: "laptop" });
    await b.until((c) => c.of("snapshot").length === 1, "b's snapshot");
    a.send("tool-0000001", 'tool Bash {"command":"make test"}');
    await a.until((c) => c.permissions.size === 1, "a sees the request");
    await b.until((c) => c.permissions.size === 1, "b sees the request");
    expect(await fx.hybrid(info.id)).toMatchObject({ state: "awaiting_permission" });
    const [request] = b.permissions.values();
    expect(request).toMatchObject({ tool: "Bash", input: { command: "make test" } });
    // The request comes after the message holding its tool call.
    const callAt = a.events.findIndex((e) => e.type === "message" && e.message.parts.some((p) => p.type === "tool_call"));
    expect(callAt).toBeLessThan(a.events.findIndex((e) => e.type === "permission.request"));

    b.respond(request!.requestId, "allow");
    await a.until((c) => c.permissions.size === 0 && turnEnds(c).length === 1, "a sees it resolved and the turn end");
    // Answering took control.
    expect(a.controller?.clientId).toBe("client-b-0002");
    a.respond(request!.requestId, "deny");
    a.send("tool-0000002", "say after");
    await a.until((c) => turnEnds(c).length === 2, "the next turn ended");
    for (const client of [a, b]) {
      const resolved = client.of("permission.resolved");
      expect(resolved).toHaveLength(1);
      expect(resolved[0]).toMatchObject({ requestId: request!.requestId, decision: "allow", by: { clientId: "client-b-0002", label: "laptop" } });
    }
    expect(a.transcript()).toContain('user: tool_result ran Bash {"command":"make test"}');
  });

  it("shows an API error once: as the agent's message, not again as the turn's error", async () => {
    const { info, chat } = await chatSession();
    chat.send("fail-0000001", "fail");
    await chat.until((c) => turnEnds(c).length === 1, "the turn ended");
    expect(turnEnds(chat)[0]).toMatchObject({ status: "error" });
    expect(chat.transcript()).toEqual(["user: fail", "assistant: API Error: 400 fake failure"]);
    // And once in the history read back from the transcript.
    expect((await fx.move(info.id, "terminal")).status).toBe(200);
    expect((await fx.move(info.id, "chat")).status).toBe(200);
    const back = await fx.chat(info.id);
    await back.until((c) => c.of("snapshot").length === 1, "snapshot");
    expect(back.transcript()).toEqual(["user: fail", "assistant: API Error: 400 fake failure"]);
  });

  it("answers AskUserQuestion with updatedInput carrying the answers, and ExitPlanMode by allowing or refusing with a message", async () => {
    const { chat } = await chatSession();
    const questions = [{ question: "Which color?", header: "Color", multiSelect: false, options: [{ label: "Red", description: "warm" }, { label: "Blue", description: "cool" }] }];
    chat.send("ask-00000001", `tool AskUserQuestion ${JSON.stringify({ questions })}`);
    await chat.until((c) => c.permissions.size === 1, "the question");
    const [ask] = chat.permissions.values();
    expect(ask).toMatchObject({ tool: "AskUserQuestion", input: { questions } });
    chat.sendMessage({ type: "permission.respond", requestId: ask!.requestId, decision: "allow", updatedInput: { questions, answers: { "Which color?": "Green, like grass" } } });
    await chat.until((c) => turnEnds(c).length === 1, "the turn ended");
    expect(chat.transcript()).toContain('user: tool_result Your questions have been answered: "Which color?"="Green, like grass". You can now continue with these answers in mind.');

    chat.send("plan-0000001", 'tool ExitPlanMode {"plan":"1. a"}');
    await chat.until((c) => c.permissions.size === 1, "the plan");
    const [plan] = chat.permissions.values();
    chat.sendMessage({ type: "permission.respond", requestId: plan!.requestId, decision: "deny", message: "Also do b" });
    await chat.until((c) => turnEnds(c).length === 2, "the plan turn ended");
    expect(chat.transcript()).toContain("user: tool_result (error) Also do b");
  });

  it("interrupts a slow turn and cancels its pending permission", async () => {
    const { chat } = await chatSession();
    chat.send("intr-0000001", 'tool Bash {"command":"sleep"}; slow 30');
    await chat.until((c) => c.permissions.size === 1, "the request");
    chat.sendMessage({ type: "interrupt" });
    await chat.until((c) => turnEnds(c).length === 1, "the turn ended");
    expect(turnEnds(chat)[0]).toMatchObject({ status: "interrupted" });
    expect(chat.of("permission.resolved")).toEqual([expect.objectContaining({ decision: "canceled", by: null })]);
    expect(chat.transcript().some((l) => l.includes("Working"))).toBe(false);
  });

  it("moves from a chat frame: refused with an error frame while busy, done with interrupt", async () => {
    const { info, chat } = await chatSession();
    chat.send("busy-0000001", "slow 30");
    await chat.until((c) => c.status?.state === "busy", "busy");
    chat.move("terminal");
    await chat.until((c) => c.of("error").length === 1, "the refusal");
    expect(chat.of("error")[0]).toMatchObject({ code: "BUSY" });
    expect(chat.closeCode).toBeNull();
    chat.move("terminal", true);
    expect(await chat.closed()).toBe(CloseCode.MOVED);
    expect(chat.closeReason).toBe("session moved: terminal");
    await fx.waitForHybrid(info.id, (h) => h.end === "terminal" && h.state === "idle", "the TUI runs");
    expect(maxConcurrentAgents(fx.pidLines())).toBe(1);
  });

  it("sends a draft exactly once across a reconnect (same id after the socket dropped), resuming with since", async () => {
    const { info, chat } = await chatSession({ client: "client-o-0001" });
    // The socket drops right after the send left (no status seen yet).
    chat.send("offline-0001", "say exactly once");
    await chat.close();

    // Reconnect like a PWA whose outbox still holds the draft: ask, then send it again.
    const again = await fx.chat(info.id, { client: "client-o-0001", since: chat.lastSeq });
    again.sendMessage({ type: "query", ids: ["offline-0001"] });
    await again.until((c) => c.submissionStates("offline-0001").length > 0, "the query answered");
    expect(["received", "written"]).toContain(again.submissionStates("offline-0001")[0]);
    again.send("offline-0001", "say exactly once");
    await again.until((c) => c.of("turn").some((t) => t.turnId === "offline-0001" && t.phase === "end"), "the turn ended");
    again.sendMessage({ type: "resync" });
    await again.until((c) => c.of("snapshot").length === 1, "a fresh snapshot");
    expect(again.transcript().filter((l) => l === "user: say exactly once")).toHaveLength(1);
    expect(again.events[0]?.type).toBe("hello");
    // `since` was current: the reconnect replayed instead of sending a snapshot first.
    expect(again.events[2]?.type).not.toBe("snapshot");
  });

  it("refuses a send without text as failed: invalid, and compresses with compress=1", async () => {
    const { info, chat } = await chatSession();
    chat.send("empty-000001", "   ");
    chat.sendRaw('{"type":"send","id":"badtext-0001","text":42}');
    chat.sendRaw("not json");
    await chat.until((c) => c.submissionStates("badtext-0001").length === 1 && c.submissionStates("empty-000001").length === 1, "both refused");
    expect(chat.of("submission").map((s) => [s.id, s.state, s.error])).toEqual([
      ["empty-000001", "failed", "invalid"],
      ["badtext-0001", "failed", "invalid"],
    ]);
    const compressed = await fx.chat(info.id, { compress: true });
    await compressed.until((c) => c.of("snapshot").length === 1, "snapshot");
    expect(compressed.ws.extensions).toContain("permessage-deflate");
  });

  it("says permissions are unavailable when the agent refuses a tool without asking", async () => {
    const { info, chat } = await chatSession({ env: { FAKE_CLAUDE_NO_PERMISSION_EVENTS: "1" } });
    chat.send("noperm-00001", "tool Bash {}");
    await chat.until((c) => c.of("turn").some((t) => t.phase === "end"), "the turn ended");
    expect(chat.of("permission.request")).toHaveLength(0);
    expect(chat.status?.error).toMatch(/permissions unavailable/);
    expect((await fx.hybrid(info.id)).error).toMatch(/permissions unavailable/);
    const later = await fx.chat(info.id);
    await later.until((c) => c.hello !== null, "hello");
    expect(later.hello!.caps.permissions).toBe(false);
  });

  it("lets a read-only token watch but never send, answer, interrupt or move", async () => {
    const { info, chat } = await chatSession();
    // Agent tokens act only while the Agent API is on (docs/design.md, Authentication and credentials).
    await fx.server.api("/api/settings", { method: "PUT", json: { open_api: { enabled: true } } });
    const created = await fx.server.api("/api/tokens", { method: "POST", json: { name: "watcher", capabilities: ["terminal:read"] } });
    const { token } = (await created.json()) as { token: string };
    const watcher = await fx.chat(info.id, { token, client: "watcher-0001" });
    await watcher.until((c) => c.of("snapshot").length === 1, "the watcher's snapshot");
    watcher.send("watch-000001", "say from the watcher");
    watcher.move("terminal", true);
    watcher.sendMessage({ type: "interrupt" });
    chat.send("owner-000001", "say from the owner");
    await watcher.until((c) => c.of("turn").some((t) => t.phase === "end"), "the owner's turn, seen by the watcher");
    expect(watcher.transcript()).toEqual(["user: say from the owner", "assistant: from the owner"]);
    expect(watcher.of("submission")).toEqual([]);
    expect(watcher.controller?.clientId).toBe("client-a-0001");
    expect((await fx.hybrid(info.id)).end).toBe("chat");
    const move = await fetch(`${fx.server.url}/api/sessions/${info.id}/move`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: '{"to":"terminal"}' });
    expect(move.status).toBe(403);
  });

  it("closes with 4404 for an unknown or plain session, and with 4404 when the session is deleted", async () => {
    const plain = await fx.server.createSession();
    const notHybrid = await fx.chat(plain.id);
    expect(await notHybrid.closed()).toBe(CloseCode.NOT_FOUND);
    const { info, chat } = await chatSession();
    const pid = Number(fx.pidLines().at(-1)!.pid);
    expect((await fx.server.api(`/api/sessions/${info.id}`, { method: "DELETE" })).status).toBe(204);
    expect(await chat.closed()).toBe(CloseCode.NOT_FOUND);
    await chat.until(() => fx.pidLines().some((l) => l.pid === pid && l.what === "exit"), "the agent ended");
    expect(maxConcurrentAgents(fx.pidLines())).toBe(1);
  });
});
