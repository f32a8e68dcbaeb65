/**
 * The real Claude Code (the pinned npm package, installed once into a cache outside node_modules)
 * driven through webmux at both ends against our mock Messages API on 127.0.0.1: the TUI in a PTY
 * with the injected hooks, the chat end over stream-json. What the fake claude assumes, checked
 * against the program itself.
 */
import { spawn, spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readSessionInfo } from "../contract/payloads.ts";
import { CloseCode } from "../contract/protocol.ts";
import type { HybridInfo, SessionInfo } from "../contract/types.ts";
import { startTestServer, type TestServer } from "../testing/test-server.ts";
import { TerminalClient } from "../testing/terminal-client.ts";
import { waitFor } from "../testing/wait.ts";
import { ChatClient } from "../testing/chat-client.ts";
import { FAKE_CLAUDE } from "../testing/hybrid-fixture.ts";
import { AGENT_CLIS } from "../testing/agents/install-agent-clis.mjs";
import { realAgentCli, startRealClaude, type RealClaude } from "../testing/agents/real-agents.ts";

const claude = realAgentCli("claude");
/** A real start or turn against the local mock takes about a second; a busy 2-core machine may take many. */
const REAL_MS = 120_000;
/** A whole test: several starts, turns and moves. */
const TEST_MS = 240_000;
/** PermissionRequest comes at once; Notification(permission_prompt) would come 6 s after the dialog. */
const PERMISSION_STATE_WITHIN_MS = 3_000;
/** The TUI's size: wide enough that its dialog and replies are not wrapped. */
const SCREEN = { cols: 120, rows: 40 };

const ESCAPE_RESIDUE = /[\x00-\x08\x0b-\x1f\x7f]/;
const QUESTION = { question: "Which color?", header: "Color", multiSelect: false, options: [{ label: "Red", description: "warm" }, { label: "Blue", description: "cool" }] };

describe.skipIf(claude.skip !== undefined)(`the real Claude Code ${AGENT_CLIS.claude.version} through webmux${claude.skip ? ` (skipped: ${claude.skip})` : ""}`, () => {
  let server: TestServer;
  let kit: RealClaude;

  beforeAll(async () => {
    server = await startTestServer();
    kit = await startRealClaude(claude.path!);
    kit.mock.script("say hello", { text: "Hello **world**, here is code:\n\n```js\nconsole.log(1)\n```" });
    kit.mock.script("run tool", { tool: "Bash", input: { command: "touch made-by-tool.txt", description: "make a file" } }, { text: "tool done" });
    kit.mock.script("refuse tool", { tool: "Bash", input: { command: "touch refused.txt", description: "make another file" } }, { text: "tool refused" });
    kit.mock.script("ask me", { tool: "AskUserQuestion", input: { questions: [QUESTION] } }, { text: "got it" });
    kit.mock.script(
      "plan it",
      { tool: "EnterPlanMode", input: {} },
      { tool: "ExitPlanMode", input: { plan: "1. do a\n2. do b" } },
      { tool: "ExitPlanMode", input: { plan: "1. do a\n2. do b\n3. do c" } },
      { text: "planned" },
    );
    kit.mock.script("api fail", { error: { status: 400, type: "invalid_request_error", message: "mock bad request" } });
    kit.mock.script("hang", { hang: { ms: REAL_MS } });
    kit.mock.script("order tool", { tool: "Bash", input: { command: "touch order.txt", description: "make a file" } }, { text: "done" });
  }, REAL_MS * 5);

  afterAll(async () => {
    await server?.stop();
    await kit?.stop();
  });

  async function create(body: { end?: "chat" | "terminal"; conversationId?: string; cwd?: string }): Promise<Response> {
    return server.api("/api/sessions", {
      method: "POST",
      json: { hybrid: { agent: "claude", end: body.end ?? "chat", ...(body.conversationId ? { conversationId: body.conversationId } : {}) }, cwd: body.cwd ?? kit.cwd, env: kit.env, ...SCREEN },
    });
  }
  async function created(body: Parameters<typeof create>[0]): Promise<SessionInfo> {
    const res = await create(body);
    expect(res.status, await res.clone().text()).toBe(201);
    return readSessionInfo(await res.json());
  }
  async function hybrid(id: string): Promise<HybridInfo> {
    return readSessionInfo(await (await server.api(`/api/sessions/${id}`)).json()).hybrid!;
  }
  function waitForState(id: string, state: HybridInfo["state"], message: string, timeout = REAL_MS): Promise<HybridInfo> {
    return waitFor(async () => {
      const h = await hybrid(id);
      return h.state === state ? h : null;
    }, { timeout, message });
  }
  function move(id: string, to: "chat" | "terminal", interrupt = false): Promise<Response> {
    return server.api(`/api/sessions/${id}/move`, { method: "POST", json: { to, interrupt } });
  }
  async function chatOf(id: string): Promise<ChatClient> {
    const chat = await ChatClient.connect(server.url, id, { token: server.token, client: `real-${id}` });
    await chat.until((c) => c.status?.state === "idle", "the chat end started", REAL_MS);
    return chat;
  }
  const turnEnds = (chat: ChatClient) => chat.of("turn").filter((t) => t.phase === "end");
  async function turn(chat: ChatClient, id: string, text: string): Promise<void> {
    const before = turnEnds(chat).length;
    chat.send(id, text);
    await chat.until((c) => turnEnds(c).length > before, `the turn "${text}" ended`, REAL_MS);
  }
  /** Type a prompt into the TUI: the text first (so it is not taken as a paste with a newline), Enter once it shows. */
  async function typeInTui(term: TerminalClient, text: string): Promise<void> {
    term.type(text);
    // The prompt is "❯" and a no-break space.
    await waitFor(async () => (await term.screenLines()).some((l) => /^❯\s/.test(l) && l.slice(2).trimEnd() === text), { timeout: REAL_MS, message: `"${text}" typed` });
    term.type("\r");
  }
  async function screenShows(term: TerminalClient, needle: string): Promise<void> {
    await waitFor(async () => (await term.screenLines()).join("\n").includes(needle), { timeout: REAL_MS, message: `the TUI showing "${needle}"` });
  }

  it("chat end: a Markdown reply streamed in deltas, with the API message's id, read back the same from the transcript", async () => {
    const info = await created({ end: "chat" });
    const chat = await chatOf(info.id);
    expect(chat.hello!.caps).toEqual({ permissions: true, interrupt: true });
    await turn(chat, "hello-000001", "say hello");
    expect(turnEnds(chat)[0]).toMatchObject({ turnId: "hello-000001", status: "success" });
    expect(chat.transcript()).toEqual(["user: say hello", "assistant: Hello **world**, here is code:\n\n```js\nconsole.log(1)\n```"]);
    expect(chat.of("delta").length).toBeGreaterThan(0);
    const live = [...chat.messages.values()];
    expect(live[1]!.id).toMatch(/^msg_mock/);
    expect(kit.mock.mainRequests("say hello")).toHaveLength(1);

    // Parked and attached again: the history comes from Claude Code's own transcript, same ids.
    await chat.close();
    expect((await move(info.id, "terminal")).status).toBe(200);
    expect((await move(info.id, "chat")).status).toBe(200);
    const back = await ChatClient.connect(server.url, info.id, { token: server.token });
    await back.until((c) => c.of("snapshot").length === 1, "snapshot");
    expect(back.transcript()).toEqual(chat.transcript());
    expect([...back.messages.keys()]).toEqual(live.map((m) => m.id));

    // Only conversations that will resume here are offered: another cwd, or an id that is not a UUID, is refused.
    const elsewhere = join(kit.root, "elsewhere");
    mkdirSync(elsewhere, { recursive: true });
    const refused = await create({ end: "chat", conversationId: info.hybrid!.conversationId, cwd: elsewhere });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain("belongs to another directory");
    expect((await create({ end: "chat", conversationId: "not-a-uuid" })).status).toBe(400);
  }, TEST_MS);

  it("chat end: a tool call's permission prompt answered from the chat (allowed: it runs; refused: it does not)", async () => {
    const info = await created({ end: "chat" });
    const chat = await chatOf(info.id);
    chat.send("tool-0000001", "run tool");
    await chat.until((c) => c.permissions.size === 1, "the permission request", REAL_MS);
    const [asked] = chat.permissions.values();
    expect(asked).toMatchObject({ tool: "Bash", input: { command: "touch made-by-tool.txt" } });
    expect(chat.status?.state).toBe("awaiting_permission");
    chat.respond(asked!.requestId, "allow");
    await chat.until((c) => turnEnds(c).length === 1, "the tool turn ended", REAL_MS);
    expect(existsSync(join(kit.cwd, "made-by-tool.txt"))).toBe(true);
    expect(chat.transcript()).toEqual(["user: run tool", "assistant: tool_call Bash", "user: tool_result (Bash completed with no output)", "assistant: tool done"]);

    chat.send("tool-0000002", "refuse tool");
    await chat.until((c) => c.permissions.size === 1, "the second permission request", REAL_MS);
    const [second] = chat.permissions.values();
    chat.sendMessage({ type: "permission.respond", requestId: second!.requestId, decision: "deny", message: "not this file" });
    await chat.until((c) => turnEnds(c).length === 2, "the refused turn ended", REAL_MS);
    expect(existsSync(join(kit.cwd, "refused.txt"))).toBe(false);
    expect(chat.transcript()).toContain("user: tool_result (error) not this file");
  }, TEST_MS);

  it("chat end: AskUserQuestion answered with updatedInput, and ExitPlanMode refused with what to change, then approved", async () => {
    const info = await created({ end: "chat" });
    const chat = await chatOf(info.id);
    chat.send("ask-00000001", "ask me");
    await chat.until((c) => c.permissions.size === 1, "the question", REAL_MS);
    const [question] = chat.permissions.values();
    expect(question).toMatchObject({ tool: "AskUserQuestion", input: { questions: [QUESTION] } });
    chat.sendMessage({ type: "permission.respond", requestId: question!.requestId, decision: "allow", updatedInput: { questions: [QUESTION], answers: { "Which color?": "Green, like grass" } } });
    await chat.until((c) => turnEnds(c).length === 1, "the question turn ended", REAL_MS);
    // What the model got back: the answer, not "The user did not answer the questions."
    const answered = 'Your questions have been answered: "Which color?"="Green, like grass". You can now continue with these answers in mind.';
    expect(chat.transcript()).toContain(`user: tool_result ${answered}`);
    expect(JSON.stringify(kit.mock.mainRequests("ask me").at(-1)!.body.messages)).toContain(JSON.stringify(answered).slice(1, -1));

    // EnterPlanMode runs without asking; leaving plan mode (ExitPlanMode) asks.
    chat.send("plan-0000001", "plan it");
    await chat.until((c) => [...c.permissions.values()].some((p) => p.tool === "ExitPlanMode"), "the first plan", REAL_MS);
    const [first] = chat.permissions.values();
    expect(first).toMatchObject({ tool: "ExitPlanMode", input: { plan: "1. do a\n2. do b" } });
    chat.sendMessage({ type: "permission.respond", requestId: first!.requestId, decision: "deny", message: "Add a step c" });
    await chat.until((c) => [...c.permissions.values()].some((p) => p.tool === "ExitPlanMode" && p.requestId !== first!.requestId), "the second plan", REAL_MS);
    const [second] = chat.permissions.values();
    expect(second!.input).toEqual({ plan: "1. do a\n2. do b\n3. do c" });
    chat.respond(second!.requestId, "allow");
    await chat.until((c) => turnEnds(c).length === 2, "the plan turn ended", REAL_MS);
    const lines = chat.transcript();
    expect(lines).toContain("user: tool_result (error) Add a step c");
    expect(lines.some((l) => l.startsWith("user: tool_result User has approved your plan."))).toBe(true);
    expect(lines.at(-1)).toBe("assistant: planned");
  }, TEST_MS);

  it("chat end: an interrupt ends a running turn; an API error ends one, shown once", async () => {
    const info = await created({ end: "chat" });
    const chat = await chatOf(info.id);
    chat.send("hang-0000001", "hang");
    await chat.until((c) => c.transcript().some((l) => l.startsWith("assistant: Working")), "the reply streaming", REAL_MS);
    chat.sendMessage({ type: "interrupt" });
    await chat.until((c) => turnEnds(c).length === 1, "the interrupted turn ended", REAL_MS);
    expect(turnEnds(chat)[0]).toMatchObject({ status: "interrupted" });
    await chat.until((c) => c.status?.state === "idle", "idle after the interrupt");

    await turn(chat, "fail-0000001", "api fail");
    expect(turnEnds(chat)[1]).toMatchObject({ status: "error" });
    const errors = chat.transcript().filter((l) => l.includes("mock bad request"));
    expect(errors).toEqual(["assistant: API Error: 400 mock bad request"]);
    await turn(chat, "after-000001", "say hello");
    expect(turnEnds(chat)[2]).toMatchObject({ status: "success" });
  }, TEST_MS);

  it("terminal → chat → terminal: PermissionRequest at once, StopFailure ends a turn, the history crosses both ways", async () => {
    const info = await created({ end: "terminal" });
    expect(info.hybrid).toMatchObject({ end: "terminal", state: "idle" });
    const term = await TerminalClient.connect(server.url, info.id, { token: server.token, screen: SCREEN });
    await screenShows(term, "Claude Code v");

    await typeInTui(term, "run tool");
    await screenShows(term, "Do you want to proceed?");
    const asked = Date.now();
    await waitForState(info.id, "awaiting_permission", "awaiting_permission from PermissionRequest");
    expect(Date.now() - asked).toBeLessThan(PERMISSION_STATE_WITHIN_MS);
    expect((await move(info.id, "chat")).status).toBe(409);
    term.type("\r"); // 1. Yes
    await waitForState(info.id, "idle", "idle after Stop");
    expect(existsSync(join(kit.cwd, "made-by-tool.txt"))).toBe(true);

    // An API error: Claude Code runs StopFailure, not Stop; the turn is over all the same.
    await typeInTui(term, "api fail");
    await screenShows(term, "mock bad request");
    await waitForState(info.id, "idle", "idle after StopFailure");
    // A local command prints in colour; the transcript keeps the escape sequences, the chat must not.
    await typeInTui(term, "/context");
    await screenShows(term, "Estimated usage by category");
    expect((await move(info.id, "chat")).status).toBe(200);
    expect(await term.closed()).toBe(CloseCode.MOVED);

    const chat = await ChatClient.connect(server.url, info.id, { token: server.token, client: "real-moves" });
    await chat.until((c) => c.of("snapshot").length === 1, "snapshot");
    const fromTui = chat.transcript();
    expect(fromTui.slice(0, 4)).toEqual(["user: run tool", "assistant: tool_call Bash", "user: tool_result (Bash completed with no output)", "assistant: tool done"]);
    expect(fromTui.filter((l) => l.includes("mock bad request"))).toEqual(["assistant: API Error: 400 mock bad request"]);
    expect(fromTui).toContain("system: [ran /context]");
    const context = fromTui.find((l) => l.includes("Context Usage"));
    expect(context).toMatch(/^system: \[Context Usage\n/);
    expect(context).not.toMatch(ESCAPE_RESIDUE);
    await chat.until((c) => c.status?.state === "idle", "the chat end started", REAL_MS);
    await turn(chat, "move-0000001", "say hello");
    expect(chat.transcript().at(-1)).toContain("Hello **world**");

    expect((await move(info.id, "terminal")).status).toBe(200);
    expect(await chat.closed()).toBe(CloseCode.MOVED);
    const back = await TerminalClient.connect(server.url, info.id, { token: server.token, screen: SCREEN });
    // The resumed TUI shows the turn sent from the chat.
    await screenShows(back, "Hello world, here is code:");
    expect((await hybrid(info.id)).conversationId).toBe(info.hybrid!.conversationId);
    await back.close();
  }, TEST_MS);

  it("the fake claude refuses what the real one refuses, with the same exit code and words", () => {
    const cases = [
      ["--no-such-option"],
      ["-p", "--input-format", "stream-json", "--output-format", "stream-json"], // stream-json without --verbose
      ["--session-id", "11111111-1111-4111-8111-111111111111", "--resume", "22222222-2222-4222-8222-222222222222"],
      ["-p", "--resume", "22222222-2222-4222-8222-222222222222", "hi"],
      ["-p", "--session-id", "not-a-uuid", "hi"],
    ];
    for (const args of cases) {
      const run = (bin: string) => {
        const result = spawnSync(bin, args, { cwd: kit.cwd, env: { ...process.env, ...kit.env }, input: "", encoding: "utf8", timeout: REAL_MS });
        return { status: result.status, line: `${result.stderr}${result.stdout}`.split("\n").find((l) => l.trim() !== "") ?? "" };
      };
      expect(run(FAKE_CLAUDE), args.join(" ")).toEqual(run(claude.path!));
    }
  }, TEST_MS);

  it("the fake claude's stream-json events come in the real one's order (a reply; a tool asked about, allowed, then a reply)", async () => {
    /** One headless turn: the event kinds in order, runs of deltas as one (their number depends on chunking). */
    async function kinds(bin: string, prompt: string): Promise<string[]> {
      const args = ["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose", "--include-partial-messages", "--permission-prompt-tool", "stdio", "--session-id", randomUUID()];
      const agent = spawn(bin, args, { cwd: kit.cwd, env: { ...process.env, ...kit.env }, stdio: ["pipe", "pipe", "ignore"] });
      const write = (line: object) => agent.stdin.write(`${JSON.stringify(line)}\n`);
      write({ type: "control_request", request_id: "init-1", request: { subtype: "initialize", hooks: null } });
      write({ type: "user", message: { role: "user", content: [{ type: "text", text: prompt }] }, parent_tool_use_id: null, session_id: "", uuid: randomUUID() });
      const seen: string[] = [];
      createInterface({ input: agent.stdout }).on("line", (line) => {
        const event = JSON.parse(line) as { type: string; subtype?: string; event?: { type: string }; request?: { subtype: string; input: unknown }; request_id?: string };
        const kind = event.type === "stream_event" ? `stream:${event.event!.type}` : event.type === "system" ? `system:${event.subtype}` : event.type === "control_request" ? `control_request:${event.request!.subtype}` : event.type;
        if (kind !== seen.at(-1) || kind !== "stream:content_block_delta") seen.push(kind);
        if (kind === "control_request:can_use_tool") write({ type: "control_response", response: { subtype: "success", request_id: event.request_id, response: { behavior: "allow", updatedInput: event.request!.input } } });
        if (event.type === "result") agent.stdin.end();
      });
      await new Promise((resolve) => agent.once("exit", resolve));
      return seen;
    }
    expect(await kinds(FAKE_CLAUDE, "say hello")).toEqual(await kinds(claude.path!, "say hello"));
    expect(await kinds(FAKE_CLAUDE, 'tool Bash {"command":"touch order.txt"}; say done')).toEqual(await kinds(claude.path!, "order tool"));
  }, TEST_MS);

  it("a TUI that cannot start (no such conversation) parks the session with its own words, without escape residue", async () => {
    const missing = "0d9d5a55-8a8e-4c1e-9b2a-6f1e2d3c4b5a";
    const info = await created({ end: "terminal", conversationId: missing });
    const parked = await waitFor(async () => {
      const h = await hybrid(info.id);
      return h.end === "chat" && h.error ? h : null;
    }, { timeout: REAL_MS, message: "parked with the start failure" });
    expect(parked.error).toContain(`No conversation found with session ID: ${missing}`);
    expect(parked.error).not.toMatch(ESCAPE_RESIDUE);
  }, TEST_MS);
});
