import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readSessionInfo } from "../contract/payloads.ts";
import { CloseCode } from "../contract/protocol.ts";
import type { SessionInfo } from "../contract/types.ts";
import { TerminalClient } from "../testing/terminal-client.ts";
import { waitFor } from "../testing/wait.ts";
import { INTERRUPT_WAIT_MS } from "./chat-end.ts";
import { HOOK_SECRET_VARIABLE } from "./hybrid-manager.ts";
import type { ChatClient } from "../testing/chat-client.ts";
import { FAKE_CLAUDE, maxConcurrentAgents, startHybridFixture, type HybridFixture } from "../testing/hybrid-fixture.ts";

let fx: HybridFixture;
beforeEach(async () => {
  fx = await startHybridFixture();
});
afterEach(async () => {
  await fx.stop();
});

/** The state must follow the TUI's permission prompt well before the real Notification's 6 s. */
const PERMISSION_STATE_WITHIN_MS = 3_000;
/** What the fake TUI draws when it waits for a prompt. */
const PROMPT = "\x1b[1m>\x1b[0m ";

/** Type a prompt into the TUI and wait for its reply and the next prompt (drawn after the Stop hook was answered). */
async function typePrompt(term: TerminalClient, text: string, reply: string): Promise<void> {
  const from = term.text.length;
  term.type(`${text}\r`);
  await waitFor(() => {
    const after = term.text.slice(from);
    const at = after.indexOf(reply);
    return at !== -1 && after.slice(at).includes(PROMPT);
  }, { message: `reply ${reply} and the next prompt` });
}

describe("hybrid sessions: moves", () => {
  it("continues two TUI turns in the chat: terminal clients get 4409, the snapshot holds both turns", async () => {
    const info = await fx.create();
    expect(info.hybrid).toMatchObject({ agent: "claude", end: "terminal", previousConversationIds: [] });
    const term = await TerminalClient.connect(fx.server.url, info.id, { token: fx.server.token });
    await term.waitForText(PROMPT);
    await typePrompt(term, "say one", "⏺ one");
    await typePrompt(term, "say two", "⏺ two");
    expect((await fx.hybrid(info.id)).state).toBe("idle");

    const moved = await fx.move(info.id, "chat");
    expect(moved.status).toBe(200);
    expect(await term.closed()).toBe(CloseCode.MOVED);
    expect(term.closeReason).toBe("session moved: chat");
    expect((await fx.hybrid(info.id))).toMatchObject({ end: "chat", state: "parked" });

    const chat = await fx.chat(info.id);
    await chat.until((c) => c.of("snapshot").length === 1, "snapshot");
    expect(chat.hello).toMatchObject({ sessionId: info.id, agent: "claude", end: "chat", conversationId: info.hybrid!.conversationId });
    expect(chat.transcript()).toEqual(["user: say one", "assistant: one", "user: say two", "assistant: two"]);
    await chat.close();
    expect(maxConcurrentAgents(fx.pidLines())).toBe(1);
  });

  it("moves to the terminal during a slow turn only with interrupt: the turn is interrupted, the permission canceled, a new generation starts, history intact", async () => {
    const info = await fx.create();
    expect((await fx.move(info.id, "chat")).status).toBe(200);
    const chat = await fx.chat(info.id, { client: "client-a-0001" });
    await chat.until((c) => c.status?.state === "idle", "the chat end started");
    chat.send("before-00001", "say before the move");
    await chat.until((c) => turnEnded(c, "before-00001"), "the first turn");
    chat.send("slow-0000001", 'tool Bash {"command":"deploy"}; slow 30');
    await chat.until((c) => c.permissions.size === 1, "the permission request");
    const generation = (await fx.info(info.id)).generation;

    const refused = await fx.move(info.id, "terminal");
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("BUSY");
    expect(chat.closeCode).toBeNull();

    const asked = Date.now();
    const moved = await fx.move(info.id, "terminal", true);
    expect(moved.status).toBe(200);
    // The agent honoured the interrupt: nobody waited out the grace for it.
    expect(Date.now() - asked).toBeLessThan(INTERRUPT_WAIT_MS);
    expect(await chat.closed()).toBe(CloseCode.MOVED);
    expect(chat.closeReason).toBe("session moved: terminal");
    const after: SessionInfo = readSessionInfo(await moved.json());
    expect(after.hybrid).toMatchObject({ end: "terminal" });
    expect(after.status).toBe("running");
    expect(after.generation).not.toBe(generation);
    const term = await TerminalClient.connect(fx.server.url, info.id, { token: fx.server.token });
    await term.waitForText(PROMPT);
    expect(term.shownText).toContain("resumed with");

    expect((await fx.move(info.id, "chat")).status).toBe(200);
    expect(await term.closed()).toBe(CloseCode.MOVED);
    const back = await fx.chat(info.id);
    await back.until((c) => c.of("snapshot").length === 1, "snapshot");
    expect(back.transcript()).toEqual([
      "user: say before the move",
      "assistant: before the move",
      'user: tool Bash {"command":"deploy"}; slow 30',
      "assistant: tool_call Bash",
      "user: tool_result (error) The user doesn't want to proceed with this tool use. The tool use was rejected.",
      "user: [Request interrupted by user]",
    ]);
    expect(back.permissions.size).toBe(0);
    expect(maxConcurrentAgents(fx.pidLines())).toBe(1);
  });

  it("parks at the chat end when the TUI exits by itself: its clients get 4409, and a terminal attach then closes at once", async () => {
    const info = await fx.create();
    const term = await TerminalClient.connect(fx.server.url, info.id, { token: fx.server.token });
    await term.waitForText(PROMPT);
    term.type("/exit\r");
    expect(await term.closed()).toBe(CloseCode.MOVED);
    expect(term.closeReason).toBe("session moved: chat");
    expect(term.exitCode).toBeNull();
    expect(await fx.hybrid(info.id)).toEqual({ agent: "claude", conversationId: info.hybrid!.conversationId, previousConversationIds: [], end: "chat", state: "parked" });

    const late = await TerminalClient.connect(fx.server.url, info.id, { token: fx.server.token });
    expect(await late.closed()).toBe(CloseCode.MOVED);
    expect(late.closeReason).toBe("session moved: chat");
    expect(late.frames).toEqual([]);
  });

  it("adopts the new conversation id an agent mints on resume, at either end, keeping the old ones", async () => {
    const info = await fx.create({ env: { FAKE_CLAUDE_NEW_ID_ON_RESUME: "1" } });
    const first = info.hybrid!.conversationId;
    const term = await TerminalClient.connect(fx.server.url, info.id, { token: fx.server.token });
    await term.waitForText(PROMPT);
    await typePrompt(term, "say in the terminal", "⏺ in the terminal");
    expect((await fx.move(info.id, "chat")).status).toBe(200);

    const chat = await fx.chat(info.id);
    await chat.until((c) => c.status?.state === "idle", "the chat end started");
    chat.send("resume-00001", "say in the chat");
    await chat.until((c) => turnEnded(c, "resume-00001"), "the chat turn");
    const second = (await fx.hybrid(info.id)).conversationId;
    expect(second).not.toBe(first);
    expect(await fx.hybrid(info.id)).toMatchObject({ conversationId: second, previousConversationIds: [first] });
    expect(chat.status?.conversationId).toBe(second);

    expect((await fx.move(info.id, "terminal")).status).toBe(200);
    const third = await fx.waitForHybrid(info.id, (h) => h.conversationId !== second, "a third id from SessionStart");
    expect(third.previousConversationIds).toEqual([first, second]);
    const again = await TerminalClient.connect(fx.server.url, info.id, { token: fx.server.token });
    await again.waitForText("resumed with 4 earlier messages");
    expect(new Set(fx.pidLines().map((l) => l.conversationId))).toEqual(new Set([first, second, third.conversationId]));
    expect(maxConcurrentAgents(fx.pidLines())).toBe(1);
  });

  it("never runs two agent processes for one conversation, however moves and chat attaches interleave", async () => {
    const info = await fx.create();
    await fx.waitForHybrid(info.id, (h) => h.state === "idle", "the TUI started");
    const chats: ChatClient[] = [];
    // Chat clients of a session that left the chat end were closed with 4409; the others started its agent.
    const steps: Promise<unknown>[] = [];
    for (let i = 0; i < 4; i++) {
      steps.push(fx.move(info.id, "chat"));
      steps.push(fx.chat(info.id).then((c) => chats.push(c)));
      steps.push(fx.move(info.id, "terminal"));
    }
    await Promise.allSettled(steps);
    expect((await fx.move(info.id, "chat")).status).toBe(200);
    const last = await fx.chat(info.id);
    await last.until((c) => c.status?.state === "idle" && c.closeCode === null, "the chat end runs at the end");
    const lines = fx.pidLines();
    expect(lines.filter((l) => l.what === "start").length).toBeGreaterThan(4);
    expect(maxConcurrentAgents(lines)).toBe(1);
    // Every earlier process has exited; the chat end's is the one left.
    expect(lines.filter((l) => l.what === "start").length - lines.filter((l) => l.what === "exit").length).toBe(1);
  });

  it("falls back to parked with the TUI's own words (no escape residue) when the target end fails to start, keeping the conversation", async () => {
    const missing = "0b0e7c38-5d1b-4b9e-9a55-5b7c1f0e0001";
    const info = await fx.create({ hybrid: { conversationId: missing } });
    expect(info.hybrid).toMatchObject({ conversationId: missing, end: "chat", state: "parked" });
    expect(info.hybrid!.error).toBe(`the terminal end failed to start (exit code 1): No conversation found with session ID: ${missing}`);
    const chat = await fx.chat(info.id);
    chat.send("doomed-00001", "say hi");
    await chat.until((c) => c.submissionStates("doomed-00001").includes("failed"), "the send failed");
    expect(chat.status).toMatchObject({ state: "parked", error: expect.stringMatching(/chat end failed to start: .*No conversation found/) });
    expect((await fx.hybrid(info.id)).conversationId).toBe(missing);
  });

  it("offers only conversations that will resume here: a Claude id must be a UUID, and one from another directory is refused", async () => {
    const notUuid = await fx.server.api("/api/sessions", { method: "POST", json: { hybrid: { agent: "claude", conversationId: "no-such-conversation" }, cwd: fx.cwd, env: { WEBMUX_CLAUDE_BIN: FAKE_CLAUDE, CLAUDE_CONFIG_DIR: fx.configDir } } });
    expect(notUuid.status).toBe(400);
    expect(await notUuid.text()).toContain("a Claude Code conversation id is a UUID");

    // A conversation started in another directory: its transcript is under that directory's project.
    const other = join(fx.cwd, "..", "other project");
    mkdirSync(other, { recursive: true });
    const res = await fx.server.api("/api/sessions", { method: "POST", json: { hybrid: { agent: "claude", end: "chat" }, cwd: other, env: { WEBMUX_CLAUDE_BIN: FAKE_CLAUDE, CLAUDE_CONFIG_DIR: fx.configDir, FAKE_CLAUDE_DELTA_MS: "1" } } });
    const elsewhere = readSessionInfo(await res.json());
    const chat = await fx.chat(elsewhere.id);
    chat.send("elsewhere-01", "say in the other project");
    await chat.until((c) => turnEnded(c, "elsewhere-01"), "a turn in the other project");
    await chat.close();
    const refused = await fx.server.api("/api/sessions", {
      method: "POST",
      json: { hybrid: { agent: "claude", conversationId: elsewhere.hybrid!.conversationId }, cwd: fx.cwd, env: { WEBMUX_CLAUDE_BIN: FAKE_CLAUDE, CLAUDE_CONFIG_DIR: fx.configDir } },
    });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain(`belongs to another directory (${other})`);
    // In its own directory it resumes.
    const resumed = await fx.server.api("/api/sessions", {
      method: "POST",
      json: { hybrid: { agent: "claude", conversationId: elsewhere.hybrid!.conversationId, end: "chat" }, cwd: other, env: { WEBMUX_CLAUDE_BIN: FAKE_CLAUDE, CLAUDE_CONFIG_DIR: fx.configDir } },
    });
    expect(resumed.status).toBe(201);
  });

  it("ends a TUI turn that failed on an API error (StopFailure, not Stop): idle, and a move is not refused", async () => {
    const info = await fx.create();
    const term = await TerminalClient.connect(fx.server.url, info.id, { token: fx.server.token });
    await term.waitForText(PROMPT);
    await typePrompt(term, "fail", "⏺ API Error: fake failure");
    await fx.waitForHybrid(info.id, (h) => h.state === "idle", "idle after StopFailure");
    expect((await fx.move(info.id, "chat")).status).toBe(200);
  });

  it("is awaiting_permission as soon as the TUI asks (PermissionRequest), busy again once allowed, idle at the end", async () => {
    // Notification(permission_prompt) comes 6 s late in the real TUI, and never when answered sooner.
    const info = await fx.create();
    const term = await TerminalClient.connect(fx.server.url, info.id, { token: fx.server.token });
    await term.waitForText(PROMPT);
    term.type('tool Bash {"command":"make"}; slow 2\r');
    await term.waitForText("Do you want to proceed?");
    const asked = Date.now();
    await fx.waitForHybrid(info.id, (h) => h.state === "awaiting_permission", "awaiting_permission");
    expect(Date.now() - asked).toBeLessThan(PERMISSION_STATE_WITHIN_MS);
    expect((await fx.move(info.id, "chat")).status).toBe(409);
    term.type("1");
    await fx.waitForHybrid(info.id, (h) => h.state === "busy", "busy again after the answer (PostToolUse)");
    await fx.waitForHybrid(info.id, (h) => h.state === "idle", "idle after Stop");
  });

  it("refuses a move while the TUI is busy unless asked to interrupt, then interrupts it with Esc", async () => {
    const info = await fx.create();
    const term = await TerminalClient.connect(fx.server.url, info.id, { token: fx.server.token });
    await term.waitForText(PROMPT);
    term.type("slow 60\r");
    await fx.waitForHybrid(info.id, (h) => h.state === "busy", "busy from UserPromptSubmit");
    const refused = await fx.move(info.id, "chat");
    expect(refused.status).toBe(409);
    expect(term.closeCode).toBeNull();
    expect((await fx.move(info.id, "chat", true)).status).toBe(200);
    expect(await term.closed()).toBe(CloseCode.MOVED);
    const chat = await fx.chat(info.id);
    await chat.until((c) => c.of("snapshot").length === 1, "snapshot");
    expect(chat.transcript()).toEqual(["user: slow 60", "user: [Request interrupted by user]"]);
  });

  it("takes hooks only with the session's own secret, and refuses to restart a hybrid session", async () => {
    const info = await fx.create();
    const post = (secret: string | null) =>
      fetch(`${fx.server.url}/api/hybrid/${info.id}/hook`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(secret === null ? {} : { "x-webmux-hook-secret": secret }) },
        body: JSON.stringify({ event: "UserPromptSubmit", payload: {} }),
      });
    for (const secret of [null, "wrong", fx.server.token]) expect((await post(secret)).status).toBe(401);
    const withToken = await fetch(`${fx.server.url}/api/hybrid/${info.id}/hook`, {
      method: "POST",
      headers: { authorization: `Bearer ${fx.server.token}`, "content-type": "application/json" },
      body: JSON.stringify({ event: "UserPromptSubmit", payload: {} }),
    });
    expect(withToken.status).toBe(401);
    expect((await fx.hybrid(info.id)).state).toBe("idle");
    expect(HOOK_SECRET_VARIABLE).toBe("WEBMUX_HYBRID_SECRET");
    const restart = await fx.server.api(`/api/sessions/${info.id}/restart`, { method: "POST" });
    expect(restart.status).toBe(409);
  });
});

function turnEnded(chat: ChatClient, turnId: string): boolean {
  return chat.of("turn").some((t) => t.turnId === turnId && t.phase === "end");
}
