import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SessionInfo } from "../contract/types.ts";
import { startWebmux, type Webmux, type WebmuxOptions } from "../server.ts";

export type TestServer = Webmux & {
  dataDir: string;
  /** fetch against the server with the global token (override headers to test auth) */
  api(path: string, init?: RequestInit & { json?: unknown }): Promise<Response>;
  /** create a session and return its info */
  createSession(body?: Record<string, unknown>): Promise<SessionInfo>;
  stop(): Promise<void>;
};

/** The deterministic shell tests use: no user rc files. */
export const TEST_SHELL_COMMAND = ["bash", "--norc", "--noprofile"];

/** A real server on 127.0.0.1, port 0, with a fresh data dir. */
export async function startTestServer(overrides: Partial<WebmuxOptions> = {}): Promise<TestServer> {
  const dataDir = overrides.dataDir ?? mkdtempSync(join(tmpdir(), "webmux-test-"));
  const server = await startWebmux({
    host: "127.0.0.1",
    port: 0,
    token: "test-token-0123456789abcdef",
    dataDir,
    shell: "/bin/bash",
    bufferBytes: 4 * 1024 * 1024,
    openApi: null,
    // WEBMUX_TEST_SESSION_HOST=1 runs a suite with its sessions in a session host (docs/design.md, What survives a restart).
    ...(process.env.WEBMUX_TEST_SESSION_HOST === "1" ? { sessionHost: true, stopSessionsOnExit: true } : {}),
    ...overrides,
  });
  const api: TestServer["api"] = (path, init = {}) => {
    const headers = new Headers(init.headers);
    if (!headers.has("authorization") && !headers.has("cookie")) headers.set("authorization", `Bearer ${server.token}`);
    let body = init.body;
    if (init.json !== undefined) {
      body = JSON.stringify(init.json);
      headers.set("content-type", "application/json");
    }
    return fetch(server.url + path, { ...init, headers, body, redirect: "manual" });
  };
  return {
    ...server,
    dataDir,
    api,
    async createSession(body = { command: TEST_SHELL_COMMAND }) {
      const res = await api("/api/sessions", { method: "POST", json: body });
      if (res.status !== 201) throw new Error(`create failed: ${res.status} ${await res.text()}`);
      return (await res.json()) as SessionInfo;
    },
    async stop() {
      await server.close();
      if (!overrides.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
