/**
 * The real Codex CLI (the pinned npm package, installed once into a cache outside node_modules)
 * driven through webmux at both ends against our mock Responses API on 127.0.0.1: the TUI in a
 * PTY, the chat end as one `codex exec --json` per turn. What the fake codex assumes, checked
 * against the program itself.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readSessionInfo } from "../contract/payloads.ts";
import { CloseCode } from "../contract/protocol.ts";
import type { HybridInfo, SessionInfo } from "../contract/types.ts";
import { startTestServer, type TestServer } from "../testing/test-server.ts";
import { TerminalClient } from "../testing/terminal-client.ts";
import { waitFor } from "../testing/wait.ts";
import { CODEX_CHAT_SANDBOX_TEXT } from "./adapters/codex.ts";
import { ChatClient } from "../testing/chat-client.ts";
import { AGENT_CLIS } from "../testing/agents/install-agent-clis.mjs";
import { realAgentCli, startRealCodex, type RealCodex } from "../testing/agents/real-agents.ts";

const codex = realAgentCli("codex");
const FAKE_CODEX = fileURLToPath(new URL("../testing/agents/fake/fake-codex.mjs", import.meta.url));
/** A real start or turn against the local mock takes about a second; a busy 2-core machine may take many. */
const REAL_MS = 120_000;
/** A whole test: several starts, turns and moves. */
const TEST_MS = 240_000;
const SCREEN = { cols: 120, rows: 40 };
/** What Codex says each turn about a model it has no metadata for (the mock's): true, and beside the point here. */
const NO_METADATA = /Model metadata for `mock-model` not found/;

describe.skipIf(codex.skip !== undefined)(`the real Codex ${AGENT_CLIS.codex.version} through webmux${codex.skip ? ` (skipped: ${codex.skip})` : ""}`, () => {
  let server: TestServer;
  let kit: RealCodex;

  beforeAll(async () => {
    server = await startTestServer();
    kit = await startRealCodex(codex.path!);
    kit.mock.script("say hello", { text: "Hello **world**, here is code:\n\n```js\nconsole.log(1)\n```" });
    kit.mock.script("run tool", { shell: "touch made-by-codex.txt" }, { text: "tool done" });
    kit.mock.script("api fail", { error: { status: 400, message: "mock bad request" } });
    kit.mock.script("hang", { hang: { ms: REAL_MS } });
  }, REAL_MS);

  afterAll(async () => {
    await server?.stop();
    await kit?.stop();
  });

  async function created(end: "chat" | "terminal", cwd = kit.cwd): Promise<SessionInfo> {
    const res = await server.api("/api/sessions", { method: "POST", json: { hybrid: { agent: "codex", end }, cwd, env: kit.env, ...SCREEN } });
    expect(res.status, await res.clone().text()).toBe(201);
    return readSessionInfo(await res.json());
  }
  async function hybrid(id: string): Promise<HybridInfo> {
    return readSessionInfo(await (await server.api(`/api/sessions/${id}`)).json()).hybrid!;
  }
  function move(id: string, to: "chat" | "terminal"): Promise<Response> {
    return server.api(`/api/sessions/${id}/move`, { method: "POST", json: { to } });
  }
  const turnEnds = (chat: ChatClient) => chat.of("turn").filter((t) => t.phase === "end");
  async function turn(chat: ChatClient, id: string, text: string): Promise<void> {
    const before = turnEnds(chat).length;
    chat.send(id, text);
    await chat.until((c) => turnEnds(c).length > before, `the turn "${text}" ended`, REAL_MS);
  }
  const said = (chat: ChatClient) => chat.transcript().filter((l) => !NO_METADATA.test(l));
  async function screen(term: TerminalClient): Promise<string> {
    return (await term.screenLines()).join("\n");
  }
  async function screenShows(term: TerminalClient, needle: string): Promise<void> {
    await waitFor(async () => (await screen(term)).includes(needle), { timeout: REAL_MS, message: `the TUI showing "${needle}"` });
  }
  /** Type a prompt into the TUI: the text first, Enter once it shows (at once it would be taken as a pasted newline). */
  async function typeInTui(term: TerminalClient, text: string): Promise<void> {
    await screenShows(term, "Ask Codex to do anything");
    term.type(text);
    await waitFor(async () => (await term.screenLines()).some((l) => /^›\s/.test(l) && l.slice(2).trimEnd() === text), { timeout: REAL_MS, message: `"${text}" typed` });
    term.type("\r");
  }

  it("chat end outside a git repository: a Markdown reply, and a command that writes in the workspace without asking", async () => {
    // Neither a git repository nor a trusted project: `codex exec` refuses there without --skip-git-repo-check.
    const cwd = join(kit.root, "not-a-repo");
    mkdirSync(cwd, { recursive: true });
    const info = await created("chat", cwd);
    const chat = await ChatClient.connect(server.url, info.id, { token: server.token, client: "codex-chat" });
    await chat.until((c) => c.status?.state === "idle", "the chat end ready", REAL_MS);
    expect(chat.hello!.caps).toEqual({ permissions: false, interrupt: true, sandbox: CODEX_CHAT_SANDBOX_TEXT });

    await turn(chat, "hello-000001", "say hello");
    expect(turnEnds(chat)[0]).toMatchObject({ status: "success" });
    expect(said(chat)).toEqual(["user: say hello", "assistant: Hello **world**, here is code:\n\n```js\nconsole.log(1)\n```"]);
    const thread = (await hybrid(info.id)).conversationId;
    expect(thread).not.toBe("");

    // exec's default sandbox is read-only: the file exists only because the chat end runs workspace-write.
    await turn(chat, "tool-0000001", "run tool");
    expect(turnEnds(chat)[1]).toMatchObject({ status: "success" });
    expect(existsSync(join(cwd, "made-by-codex.txt"))).toBe(true);
    expect(said(chat).slice(2)).toEqual(["user: run tool", "assistant: tool_call shell", "assistant: tool_result ", "assistant: tool done"]);
    expect((await hybrid(info.id)).conversationId).toBe(thread);
  }, TEST_MS);

  it("chat end: an interrupt stops a running turn; an API error ends one, shown once", async () => {
    const info = await created("chat");
    const chat = await ChatClient.connect(server.url, info.id, { token: server.token, client: "codex-interrupt" });
    await chat.until((c) => c.status?.state === "idle", "the chat end ready", REAL_MS);
    chat.send("hang-0000001", "hang");
    // exec --json streams no text deltas: the turn is under way once the mock has its request.
    await waitFor(() => kit.mock.requests.some((r) => r.prompt === "hang"), { timeout: REAL_MS, message: "the hanging request" });
    chat.sendMessage({ type: "interrupt" });
    await chat.until((c) => turnEnds(c).length === 1, "the interrupted turn ended", REAL_MS);
    expect(turnEnds(chat)[0]).toMatchObject({ status: "interrupted" });

    await turn(chat, "fail-0000001", "api fail");
    expect(turnEnds(chat)[1]).toMatchObject({ status: "error" });
    expect(chat.transcript().filter((l) => l.includes("mock bad request"))).toHaveLength(1);
    await turn(chat, "after-000001", "say hello");
    expect(turnEnds(chat)[2]).toMatchObject({ status: "success" });
  }, TEST_MS);

  it("terminal → chat → terminal keeps the history, with no daemon holding the thread's writer lock", async () => {
    const info = await created("terminal");
    const term = await TerminalClient.connect(server.url, info.id, { token: server.token, screen: SCREEN });
    await typeInTui(term, "say hello");
    await screenShows(term, "Worked for");
    expect(await screen(term)).toContain("Hello world, here is code:");

    expect((await move(info.id, "chat")).status).toBe(200);
    expect(await term.closed()).toBe(CloseCode.MOVED);
    const thread = (await hybrid(info.id)).conversationId;
    expect(thread).not.toBe("");
    const chat = await ChatClient.connect(server.url, info.id, { token: server.token, client: "codex-moves" });
    await chat.until((c) => c.of("snapshot").length === 1, "snapshot");
    expect(said(chat)).toEqual(["user: say hello", "assistant: Hello **world**, here is code:\n\n```js\nconsole.log(1)\n```"]);
    // At once after the TUI: a daemon it had started would still hold the thread ("already has an active writer").
    await turn(chat, "tool-0000002", "run tool");
    expect(turnEnds(chat)[0]).toMatchObject({ status: "success" });
    expect(existsSync(join(kit.cwd, "made-by-codex.txt"))).toBe(true);

    expect((await move(info.id, "terminal")).status).toBe(200);
    expect(await chat.closed()).toBe(CloseCode.MOVED);
    const back = await TerminalClient.connect(server.url, info.id, { token: server.token, screen: SCREEN });
    await screenShows(back, "tool done");
    const shown = await screen(back);
    expect(shown).toContain("Hello world, here is code:");
    expect(shown).not.toContain("open in another");
    expect((await hybrid(info.id)).conversationId).toBe(thread);
    await back.close();
  }, TEST_MS);

  it("the fake codex's exec --json events come in the real one's order (a reply; a command, then a reply)", async () => {
    /** One `exec --json` turn: its events' kinds (an item's with its type) in order. */
    async function kinds(bin: string, prompt: string): Promise<string[]> {
      const agent = spawn(bin, ["exec", "--json", "--skip-git-repo-check", "-"], { cwd: kit.cwd, env: { ...process.env, ...kit.env }, stdio: ["pipe", "pipe", "ignore"] });
      agent.stdin.end(prompt);
      const seen: string[] = [];
      createInterface({ input: agent.stdout }).on("line", (line) => {
        const event = JSON.parse(line) as { type: string; item?: { type: string; message?: string } };
        if (event.item?.type === "error" && NO_METADATA.test(event.item.message ?? "")) return;
        seen.push(event.item ? `${event.type}:${event.item.type}` : event.type);
      });
      await new Promise((resolve) => agent.once("exit", resolve));
      return seen;
    }
    expect(await kinds(FAKE_CODEX, "say hello")).toEqual(await kinds(codex.path!, "say hello"));
    expect(await kinds(FAKE_CODEX, "run touch order.txt")).toEqual(await kinds(codex.path!, "run tool"));
  }, TEST_MS);

  it("the fake codex refuses what the real one refuses, with the same exit code and words", () => {
    const cwd = join(kit.root, "refusals");
    mkdirSync(cwd, { recursive: true });
    const cases = [
      ["--no-such-option"],
      ["exec", "--json", "-"], // outside a git repository, without --skip-git-repo-check
      ["exec", "--json", "resume", "019a0000-0000-7000-8000-000000000000", "--sandbox", "workspace-write", "-"],
      ["exec", "--json", "--skip-git-repo-check", "resume", "019a0000-0000-7000-8000-000000000000", "-"],
    ];
    for (const args of cases) {
      const run = (bin: string) => {
        const result = spawnSync(bin, args, { cwd, env: { ...process.env, ...kit.env }, input: "hi", encoding: "utf8", timeout: REAL_MS });
        // The real one warns first that it makes no helper links under /tmp, where the scratch HOME is.
        const line = result.stderr.split("\n").find((l) => l.trim() !== "" && !l.startsWith("WARNING:")) ?? "";
        return { status: result.status, line };
      };
      expect(run(FAKE_CODEX), args.join(" ")).toEqual(run(codex.path!));
    }
  }, TEST_MS);
});
