/**
 * A hybrid session across a restart of the server (docs/design.md, What survives a restart): real
 * `webmux serve` processes, the real session host, the scripted fake Claude Code as the agent. The
 * host keeps the conversation's record; the next server makes the session hybrid again, at the end
 * it was at, and the chat end, the terminal end and the moves between them work on.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readSessionInfo } from "../contract/payloads.ts";
import { CloseCode } from "../contract/protocol.ts";
import type { SessionInfo } from "../contract/types.ts";
import { ChatClient } from "../testing/chat-client.ts";
import { FAKE_CLAUDE, maxConcurrentAgents, type PidLine } from "../testing/hybrid-fixture.ts";
import { TerminalClient } from "../testing/terminal-client.ts";
import { waitFor } from "../testing/wait.ts";
import { listeningUrl, runWebmux, stopWebmuxProcesses, type WebmuxRun } from "../testing/webmux-process.ts";

const TOKEN = "hybrid-restart-token-0123456789";
/** What the fake TUI draws when it waits for a prompt. */
const PROMPT = "\x1b[1m>\x1b[0m ";

const dirs: string[] = [];
const closers: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  for (const close of closers.splice(0)) await close().catch(() => {});
  stopWebmuxProcesses();
  for (const dir of dirs.splice(0)) {
    await runWebmux(["stop", "--data-dir", join(dir, "data")]).exit;
    rmSync(dir, { recursive: true, force: true });
  }
});

type Place = { root: string; data: string; cwd: string; configDir: string; pidLog: string };

function place(): Place {
  const root = mkdtempSync(join(tmpdir(), "webmux-hybrid-restart-"));
  dirs.push(root);
  const p = { root, data: join(root, "data"), cwd: join(root, "project"), configDir: join(root, "claude-config"), pidLog: join(root, "pids.log") };
  mkdirSync(p.cwd);
  return p;
}

/** Each server on a port of its own: a TUI's hooks find the one that runs now (its address file in the data dir). */
async function serve(p: Place): Promise<{ run: WebmuxRun; url: string }> {
  const run = runWebmux(["serve", "--port", "0", "--data-dir", p.data, "--token", TOKEN, "--no-qr"], { isolated: true });
  return { run, url: await listeningUrl(run) };
}

async function api(url: string, path: string, json?: unknown): Promise<Response> {
  return fetch(url + path, {
    method: json === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${TOKEN}`, ...(json === undefined ? {} : { "content-type": "application/json" }) },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
}

async function info(url: string, id: string): Promise<SessionInfo> {
  const res = await api(url, `/api/sessions/${id}`);
  expect(res.status).toBe(200);
  return readSessionInfo(await res.json());
}

async function createAtChat(url: string, p: Place): Promise<SessionInfo> {
  const res = await api(url, "/api/sessions", {
    hybrid: { agent: "claude", end: "chat" },
    cwd: p.cwd,
    env: { WEBMUX_CLAUDE_BIN: FAKE_CLAUDE, CLAUDE_CONFIG_DIR: p.configDir, FAKE_CLAUDE_PID_LOG: p.pidLog, FAKE_CLAUDE_DELTA_MS: "5" },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return readSessionInfo(await res.json());
}

async function chat(url: string, id: string): Promise<ChatClient> {
  const c = await ChatClient.connect(url, id, { token: TOKEN });
  closers.push(() => c.close());
  return c;
}

async function terminal(url: string, id: string): Promise<TerminalClient> {
  const t = await TerminalClient.connect(url, id, { token: TOKEN });
  closers.push(() => t.close());
  return t;
}

/** Send a prompt at the chat end and wait for the agent's answer to end its turn. */
async function say(c: ChatClient, id: string, word: string): Promise<void> {
  await c.until((x) => x.status?.state === "idle", "the chat end idle");
  c.send(id, `say ${word}`);
  await c.until((x) => x.of("turn").some((t) => t.turnId === id && t.phase === "end"), `the turn ${id}`, 30_000);
}

function pidLines(p: Place): PidLine[] {
  if (!existsSync(p.pidLog)) return [];
  return readFileSync(p.pidLog, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [pid, conversationId, what] = line.split(" ");
      return { pid: Number(pid), conversationId: conversationId!, what: what as "start" | "exit" };
    });
}

describe("hybrid sessions across a server restart", () => {
  it("kill -9 while the chat end is active: the next server has the session hybrid at its chat end, the conversation shows, the chat goes on, and a move to the terminal works", async () => {
    const p = place();
    const first = await serve(p);
    const s = await createAtChat(first.url, p);
    const c1 = await chat(first.url, s.id);
    await say(c1, "turn-one-0001", "one");
    expect(c1.transcript()).toEqual(["user: say one", "assistant: one"]);

    first.run.proc.kill("SIGKILL");
    await first.run.exit;
    expect(await c1.closed()).not.toBe(CloseCode.MOVED);

    const second = await serve(p);
    const after = await info(second.url, s.id);
    expect(after.hybrid).toMatchObject({ agent: "claude", end: "chat", conversationId: s.hybrid!.conversationId });
    expect(after.generation).toBe(s.generation);
    const c2 = await chat(second.url, s.id);
    await c2.until((x) => x.of("snapshot").length === 1, "snapshot");
    expect(c2.hello).toMatchObject({ sessionId: s.id, end: "chat", conversationId: s.hybrid!.conversationId });
    expect(c2.transcript()).toEqual(["user: say one", "assistant: one"]);
    await say(c2, "turn-two-0001", "two");
    expect(c2.transcript()).toEqual(["user: say one", "assistant: one", "user: say two", "assistant: two"]);

    c2.move("terminal");
    expect(await c2.closed()).toBe(CloseCode.MOVED);
    await waitFor(async () => (await info(second.url, s.id)).hybrid?.state === "idle", { message: "the TUI started", timeout: 30_000 });
    const moved = await info(second.url, s.id);
    expect(moved).toMatchObject({ status: "running", hybrid: { end: "terminal" } });
    const term = await terminal(second.url, s.id);
    await term.waitForText(PROMPT);
    expect(maxConcurrentAgents(pidLines(p))).toBe(1);
  }, 120_000);

  it("SIGTERM while the terminal end is active: the TUI runs on, its hooks reach the next server, and a move to the chat shows the whole conversation", async () => {
    const p = place();
    const first = await serve(p);
    const s = await createAtChat(first.url, p);
    const c1 = await chat(first.url, s.id);
    await say(c1, "turn-one-0001", "one");
    expect((await api(first.url, `/api/sessions/${s.id}/move`, { to: "terminal" })).status).toBe(200);
    expect(await c1.closed()).toBe(CloseCode.MOVED);
    await waitFor(async () => (await info(first.url, s.id)).hybrid?.state === "idle", { message: "the TUI started", timeout: 30_000 });
    const before = await info(first.url, s.id);
    const t1 = await terminal(first.url, s.id);
    await t1.waitForText(PROMPT);

    first.run.proc.kill("SIGTERM");
    expect(await first.run.exit).toBe(0);

    const second = await serve(p);
    const after = await info(second.url, s.id);
    expect(after).toMatchObject({ status: "running", pid: before.pid, generation: before.generation, hybrid: { end: "terminal", state: "idle", conversationId: s.hybrid!.conversationId } });
    const t2 = await terminal(second.url, s.id);
    await t2.waitForText(PROMPT);
    // The TUI's hooks post to the new server, on another port: the turn shows as busy, then idle.
    expect(new URL(second.url).port).not.toBe(new URL(first.url).port);
    const from = t2.text.length;
    t2.type("slow 2; say two\r");
    await waitFor(async () => (await info(second.url, s.id)).hybrid?.state === "busy", { message: "busy from the UserPromptSubmit hook" });
    await waitFor(() => t2.text.slice(from).includes("⏺ two"), { message: "the TUI's reply", timeout: 30_000 });
    await waitFor(async () => (await info(second.url, s.id)).hybrid?.state === "idle", { message: "idle from the Stop hook" });

    expect((await api(second.url, `/api/sessions/${s.id}/move`, { to: "chat" })).status).toBe(200);
    expect(await t2.closed()).toBe(CloseCode.MOVED);
    const c2 = await chat(second.url, s.id);
    await c2.until((x) => x.of("snapshot").length === 1, "snapshot");
    expect(c2.transcript()).toEqual(["user: say one", "assistant: one", "user: slow 2; say two", "assistant: two"]);
    await say(c2, "turn-three-01", "three");
    expect(c2.transcript().at(-1)).toBe("assistant: three");
    expect(maxConcurrentAgents(pidLines(p))).toBe(1);
  }, 120_000);

  it("kill -9 during a chat turn: the turn in flight is lost with its server, the conversation goes on at the next one, one agent at a time", async () => {
    const p = place();
    const first = await serve(p);
    const s = await createAtChat(first.url, p);
    const c1 = await chat(first.url, s.id);
    await say(c1, "turn-one-0001", "one");
    c1.send("turn-slow-001", "slow 3; say late");
    await c1.until((x) => x.status?.state === "busy", "the slow turn under way");
    first.run.proc.kill("SIGKILL");
    await first.run.exit;

    const second = await serve(p);
    const c2 = await chat(second.url, s.id);
    await c2.until((x) => x.of("snapshot").length === 1, "snapshot");
    expect(c2.transcript().slice(0, 2)).toEqual(["user: say one", "assistant: one"]);
    await say(c2, "turn-two-0001", "two");
    expect(c2.transcript().at(-1)).toBe("assistant: two");
    // The old agent (its pipes gone with its server) ended before the new one started.
    expect(maxConcurrentAgents(pidLines(p))).toBe(1);
  }, 120_000);
});
