import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readSessionInfo } from "../../contract/payloads.ts";
import { CloseCode } from "../../contract/protocol.ts";
import { TerminalClient } from "../../testing/terminal-client.ts";
import { startHybridFixture, type HybridFixture } from "../../testing/hybrid-fixture.ts";
import { CODEX_CHAT_SANDBOX_TEXT } from "./codex.ts";

const FAKE_CODEX = fileURLToPath(new URL("../../testing/agents/fake/fake-codex.mjs", import.meta.url));

let fx: HybridFixture;
let codexHome: string;
beforeEach(async () => {
  fx = await startHybridFixture();
  codexHome = mkdtempSync(join(tmpdir(), "codex-home-"));
});
afterEach(async () => {
  await fx.stop();
  rmSync(codexHome, { recursive: true, force: true });
});

async function createCodex(end: "chat" | "terminal", env: Record<string, string> = {}) {
  const res = await fx.server.api("/api/sessions", {
    method: "POST",
    json: { hybrid: { agent: "codex", end }, cwd: fx.cwd, env: { WEBMUX_CODEX_BIN: FAKE_CODEX, CODEX_HOME: codexHome, ...env } },
  });
  expect(res.status).toBe(201);
  return readSessionInfo(await res.json());
}

describe("the Codex adapter", () => {
  it("runs `codex exec --json` per turn without approvals, adopts the thread id, resumes it, and reads the rollout back as history", async () => {
    const info = await createCodex("chat");
    expect(info.hybrid).toMatchObject({ agent: "codex", conversationId: "", end: "chat", state: "parked" });
    const chat = await fx.chat(info.id, { client: "codex-client-1" });
    await chat.until((c) => c.status?.state === "idle", "ready");
    expect(chat.hello!.caps).toEqual({ permissions: false, interrupt: true, sandbox: CODEX_CHAT_SANDBOX_TEXT });
    chat.send("codex-turn-1", "run make");
    await chat.until((c) => c.of("turn").some((t) => t.turnId === "codex-turn-1" && t.phase === "end"), "the first turn");
    const thread = (await fx.hybrid(info.id)).conversationId;
    expect(thread).toMatch(/^[0-9a-f-]{36}$/);
    chat.send("codex-turn-2", "say second");
    await chat.until((c) => c.of("turn").filter((t) => t.phase === "end").length === 2, "the second turn");
    expect((await fx.hybrid(info.id)).conversationId).toBe(thread);
    // The chat end may write in the workspace (exec's default sandbox is read-only) and runs outside a git repository.
    expect(chat.transcript()).toEqual(["user: run make", "assistant: tool_call shell", "assistant: tool_result ran make", "assistant: You said: run make", "user: say second", "assistant: second"]);

    // Through the terminal end and back: the chat history is read from the rollout.
    expect((await fx.move(info.id, "terminal")).status).toBe(200);
    expect(await chat.closed()).toBe(CloseCode.MOVED);
    const term = await TerminalClient.connect(fx.server.url, info.id, { token: fx.server.token });
    await term.waitForText(`thread ${thread}`);
    expect((await fx.move(info.id, "chat")).status).toBe(200);
    const back = await fx.chat(info.id);
    await back.until((c) => c.of("snapshot").length === 1, "snapshot");
    expect(back.transcript()).toEqual(["user: run make", "assistant: tool_call shell", "user: tool_result ran make", "assistant: You said: run make", "user: say second", "assistant: second"]);
  });

  it("moves a TUI conversation to the chat without a daemon holding the thread's writer lock", async () => {
    const daemonLog = join(codexHome, "daemons.log");
    const info = await createCodex("terminal", { FAKE_CODEX_DAEMON_LOG: daemonLog });
    const term = await TerminalClient.connect(fx.server.url, info.id, { token: fx.server.token });
    await term.waitForText("› ");
    term.type("say in the tui\r");
    await term.waitForText("• in the tui");
    expect((await fx.move(info.id, "chat")).status).toBe(200);
    expect(await term.closed()).toBe(CloseCode.MOVED);
    const chat = await fx.chat(info.id, { client: "codex-client-2" });
    await chat.until((c) => c.of("snapshot").length === 1, "snapshot");
    chat.send("codex-after-tui", "say in the chat");
    await chat.until((c) => c.of("turn").some((t) => t.turnId === "codex-after-tui" && t.phase === "end"), "the chat turn");
    expect(chat.of("turn").find((t) => t.turnId === "codex-after-tui" && t.phase === "end")).toMatchObject({ status: "success" });
    expect(chat.transcript()).toEqual(["user: say in the tui", "assistant: in the tui", "user: say in the chat", "assistant: in the chat"]);
    expect(existsSync(daemonLog)).toBe(false);
  });

  it("finds the thread a new TUI run started, with no hook to say so", async () => {
    const info = await createCodex("terminal");
    const term = await TerminalClient.connect(fx.server.url, info.id, { token: fx.server.token });
    await term.waitForText("› ");
    term.type("say hello\r");
    await term.waitForText("• hello");
    term.type("/exit\r");
    expect(await term.closed()).toBe(CloseCode.MOVED);
    const hybrid = await fx.waitForHybrid(info.id, (h) => h.conversationId !== "", "the thread found");
    expect(hybrid).toMatchObject({ end: "chat", state: "parked" });
    const chat = await fx.chat(info.id);
    await chat.until((c) => c.of("snapshot").length === 1, "snapshot");
    expect(chat.transcript()).toEqual(["user: say hello", "assistant: hello"]);
  });
});
