import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { readSessionInfo } from "../contract/payloads.ts";
import type { HybridInfo, SessionInfo } from "../contract/types.ts";
import { startTestServer, type TestServer } from "./test-server.ts";
import { waitFor } from "./wait.ts";
import { ChatClient, type ChatClientOptions } from "./chat-client.ts";

/** The scripted stand-in for Claude Code (docs/design.md, Hybrid sessions). */
export const FAKE_CLAUDE = fileURLToPath(new URL("./agents/fake/fake-claude.mjs", import.meta.url));

export type PidLine = { pid: number; conversationId: string; what: "start" | "exit" };

/** A real server, a project directory, a private Claude config dir and the fake's pid log. */
export type HybridFixture = {
  server: TestServer;
  cwd: string;
  configDir: string;
  pidLog: string;
  create(body?: { hybrid?: Record<string, unknown>; env?: Record<string, string> }): Promise<SessionInfo>;
  info(id: string): Promise<SessionInfo>;
  hybrid(id: string): Promise<HybridInfo>;
  waitForHybrid(id: string, check: (h: HybridInfo) => boolean, message: string): Promise<HybridInfo>;
  move(id: string, to: "terminal" | "chat", interrupt?: boolean): Promise<Response>;
  chat(id: string, options?: Partial<ChatClientOptions>): Promise<ChatClient>;
  pidLines(): PidLine[];
  stop(): Promise<void>;
};

export async function startHybridFixture(): Promise<HybridFixture> {
  const root = mkdtempSync(join(tmpdir(), "webmux-hybrid-"));
  const cwd = join(root, "project dir");
  const configDir = join(root, "claude-config");
  const pidLog = join(root, "pids.log");
  mkdirSync(cwd, { recursive: true });
  const server = await startTestServer();
  const fixture: HybridFixture = {
    server,
    cwd,
    configDir,
    pidLog,
    async create(body = {}) {
      const res = await server.api("/api/sessions", {
        method: "POST",
        json: {
          hybrid: { agent: "claude", ...body.hybrid },
          cwd,
          env: { WEBMUX_CLAUDE_BIN: FAKE_CLAUDE, CLAUDE_CONFIG_DIR: configDir, FAKE_CLAUDE_PID_LOG: pidLog, FAKE_CLAUDE_DELTA_MS: "5", ...body.env },
        },
      });
      if (res.status !== 201) throw new Error(`create failed: ${res.status} ${await res.text()}`);
      return readSessionInfo(await res.json());
    },
    async info(id) {
      const res = await server.api(`/api/sessions/${id}`);
      if (res.status !== 200) throw new Error(`GET ${id}: ${res.status}`);
      return readSessionInfo(await res.json());
    },
    async hybrid(id) {
      return (await fixture.info(id)).hybrid!;
    },
    waitForHybrid(id, check, message) {
      return waitFor(
        async () => {
          const h = await fixture.hybrid(id);
          return check(h) ? h : null;
        },
        { message, timeout: 15_000 },
      );
    },
    move(id, to, interrupt) {
      return server.api(`/api/sessions/${id}/move`, { method: "POST", json: { to, ...(interrupt === undefined ? {} : { interrupt }) } });
    },
    chat(id, options = {}) {
      return ChatClient.connect(server.url, id, { token: server.token, ...options });
    },
    pidLines() {
      if (!existsSync(pidLog)) return [];
      return readFileSync(pidLog, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => {
          const [pid, conversationId, what] = line.split(" ");
          return { pid: Number(pid), conversationId: conversationId!, what: what as "start" | "exit" };
        });
    },
    async stop() {
      await server.stop();
      rmSync(root, { recursive: true, force: true });
    },
  };
  return fixture;
}

/** The most agent processes the pid log ever shows alive at once (1 is the invariant). */
export function maxConcurrentAgents(lines: readonly PidLine[]): number {
  let alive = 0;
  let max = 0;
  for (const line of lines) {
    alive += line.what === "start" ? 1 : -1;
    max = Math.max(max, alive);
  }
  return max;
}
