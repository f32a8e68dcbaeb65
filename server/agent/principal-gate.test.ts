import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { ChatClient } from "../testing/chat-client.ts";
import { FAKE_CLAUDE } from "../testing/hybrid-fixture.ts";
import { TerminalClient } from "../testing/terminal-client.ts";
import { startTestServer, TEST_SHELL_COMMAND, type TestServer } from "../testing/test-server.ts";
import { waitFor } from "../testing/wait.ts";
import { createToken } from "./agent-testing.ts";
import { AGENT_API_DISABLED, CREDENTIAL_EXPIRED, CREDENTIAL_REVOKED, LOGGED_OUT } from "./principal-gate.ts";

let server: TestServer;
let scratch: string;
let shell: string;
let hybrid: string;
beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), "webmux-gate-"));
  server = await startTestServer({ openApi: true });
  shell = (await server.createSession({ command: TEST_SHELL_COMMAND })).id;
  const created = await server.api("/api/sessions", {
    method: "POST",
    json: {
      hybrid: { agent: "claude", end: "chat" },
      cwd: scratch,
      env: { WEBMUX_CLAUDE_BIN: FAKE_CLAUDE, CLAUDE_CONFIG_DIR: join(scratch, "claude-config") },
    },
  });
  expect(created.status).toBe(201);
  hybrid = ((await created.json()) as { id: string }).id;
});
afterAll(async () => {
  await server?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

/** A raw WebSocket that records how it was closed; rejects with the status of a refused handshake. */
class Socket {
  closeCode: number | null = null;
  closeReason = "";
  private constructor(readonly ws: WebSocket) {
    ws.on("close", (code, reason) => {
      this.closeCode = code;
      this.closeReason = reason.toString();
    });
    ws.on("error", () => {});
  }

  static open(path: string, headers: Record<string, string>): Promise<Socket> {
    const ws = new WebSocket(`${server.url.replace(/^http/, "ws")}${path}`, { headers });
    return new Promise((resolve, reject) => {
      ws.once("open", () => resolve(new Socket(ws)));
      ws.once("unexpected-response", (_req, res) => reject(new Error(`handshake answered ${res.statusCode}`)));
      ws.once("error", reject);
    });
  }
}

type Closable = { closeCode: number | null; closeReason: string };

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** One socket of the principal on every WebSocket path. */
async function socketsOnEveryPath(headers: Record<string, string>, token: string | null): Promise<Record<string, Closable>> {
  const terminal = await Socket.open(`/ws/s/${shell}`, headers);
  const sessions = await Socket.open("/ws/sessions", headers);
  const settings = await Socket.open("/ws/settings", headers);
  const agent = await Socket.open("/ws/agent", headers);
  const sockets: Record<string, Closable> = { terminal, sessions, settings, agent };
  if (token !== null) sockets.chat = await ChatClient.connect(server.url, hybrid, { token, client: `chat-${Date.now()}` });
  return sockets;
}

async function allClosedWith(sockets: Record<string, Closable>, reason: string): Promise<void> {
  await waitFor(() => Object.values(sockets).every((s) => s.closeCode !== null), {
    timeout: 15_000,
    message: `every socket closed (${reason})`,
  });
  for (const [path, s] of Object.entries(sockets)) expect({ path, code: s.closeCode, reason: s.closeReason }).toEqual({ path, code: 1008, reason });
}

async function cookieOf(token: string): Promise<string> {
  const res = await fetch(`${server.url}/api/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ token }) });
  expect(res.status).toBe(204);
  return res.headers.get("set-cookie")!.split(";")[0]!;
}

describe("a credential that stops holding closes every socket of its principal", () => {
  it("closes a revoked token's sockets on every path, and those of browser logins made with it, with 1008 'credential revoked'", async () => {
    const agent = await createToken(server, ["terminal:read", "terminal:write"]);
    const cookie = await cookieOf(agent.token);
    const byToken = await socketsOnEveryPath(bearer(agent.token), agent.token);
    const byCookie = await socketsOnEveryPath({ cookie, origin: server.url }, null);
    const global = await TerminalClient.connect(server.url, shell, { token: server.token, client: "global-watcher" });

    expect((await server.api(`/api/tokens/${agent.id}`, { method: "DELETE" })).status).toBe(204);
    await allClosedWith(byToken, CREDENTIAL_REVOKED);
    await allClosedWith(byCookie, CREDENTIAL_REVOKED);
    expect((await fetch(`${server.url}/api/sessions`, { headers: { cookie } })).status).toBe(401);
    await global.roundTrip();
    expect(global.closeCode).toBeNull();
    await global.close();
  });

  it("closes an expired token's sockets when it expires, with 1008 'credential expired'", async () => {
    const agent = await createToken(server, ["terminal:read", "terminal:write"], 2);
    const sockets = await socketsOnEveryPath(bearer(agent.token), agent.token);
    await allClosedWith(sockets, CREDENTIAL_EXPIRED);
  });

  it("checks each client frame: a token found expired at its next frame is closed before the frame acts", async () => {
    const agent = await createToken(server, ["terminal:read", "terminal:write"], 3600);
    const typist = await TerminalClient.connect(server.url, shell, { token: agent.token, client: "expiring-typist" });
    const watcher = await TerminalClient.connect(server.url, shell, { token: server.token, client: "frame-watcher" });
    typist.type("echo before-$((6*7))\r");
    await watcher.waitForText("before-42");
    // The token's clock jumps past its expiry: no timer has fired, only the next frame can tell.
    const tokens = server.agent.tokens as unknown as { now: () => number };
    const realNow = tokens.now;
    tokens.now = () => realNow() + 2 * 3600_000;
    try {
      typist.type("echo after-$((6*7))\r");
      await waitFor(() => typist.closeCode !== null, { message: "the typist's socket closed at its frame" });
      expect([typist.closeCode, typist.closeReason]).toEqual([1008, CREDENTIAL_EXPIRED]);
      watcher.type("echo marker-$((6*7))\r");
      await watcher.waitForText("marker-42");
      expect(watcher.text).not.toContain("after-42");
    } finally {
      tokens.now = realNow;
      await watcher.close();
    }
  });
});

describe("logging out", () => {
  it("closes every socket opened with that login cookie with 1008 'logged out'; another login of the same token goes on", async () => {
    const phone = await cookieOf(server.token);
    const laptop = await cookieOf(server.token);
    const byPhone = await socketsOnEveryPath({ cookie: phone, origin: server.url }, null);
    const byLaptop = await Socket.open("/ws/sessions", { cookie: laptop, origin: server.url });
    const out = await fetch(`${server.url}/api/logout`, { method: "POST", headers: { cookie: phone, origin: server.url } });
    expect(out.status).toBe(204);
    await allClosedWith(byPhone, LOGGED_OUT);
    await expect(Socket.open("/ws/sessions", { cookie: phone, origin: server.url })).rejects.toThrow("handshake answered 401");
    expect(byLaptop.closeCode).toBeNull();
    byLaptop.ws.close();
  });
});

describe("agent principals while the Agent API is off", () => {
  it("refuses them with 403 CAPABILITY_DENIED on HTTP and handshakes and closes their sockets; switching it on restores them", async () => {
    const agent = await createToken(server, ["terminal:read", "terminal:write"]);
    const cookie = await cookieOf(agent.token);
    const sockets = await socketsOnEveryPath(bearer(agent.token), agent.token);
    const global = await TerminalClient.connect(server.url, shell, { token: server.token, client: "global-while-off" });
    const setApi = async (enabled: boolean) => expect((await server.api("/api/settings", { method: "PUT", json: { open_api: { enabled } } })).status).toBe(200);
    await setApi(false);
    try {
      await allClosedWith(sockets, AGENT_API_DISABLED);
      for (const [method, path, headers] of [
        ["GET", "/api/sessions", bearer(agent.token)],
        ["POST", "/api/sessions", bearer(agent.token)],
        ["GET", `/api/sessions/${shell}`, bearer(agent.token)],
        ["GET", "/api/settings", bearer(agent.token)],
        ["GET", "/api/sessions", { cookie }],
      ] as const) {
        const res = await fetch(`${server.url}${path}`, { method, headers: { ...headers, "content-type": "application/json", origin: server.url }, body: method === "POST" ? JSON.stringify({ command: TEST_SHELL_COMMAND }) : undefined });
        expect({ method, path, status: res.status }).toEqual({ method, path, status: 403 });
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe("CAPABILITY_DENIED");
      }
      for (const path of [`/ws/s/${shell}`, "/ws/sessions", "/ws/settings", "/ws/agent", `/ws/s/${hybrid}/chat`]) {
        await expect(Socket.open(path, bearer(agent.token)), path).rejects.toThrow("handshake answered 403");
      }
      await expect(Socket.open(`/ws/s/${shell}`, { cookie, origin: server.url })).rejects.toThrow("handshake answered 403");
      await global.roundTrip();
      expect(global.closeCode).toBeNull();
      expect((await server.api("/api/sessions")).status).toBe(200);
    } finally {
      await setApi(true);
    }
    expect((await fetch(`${server.url}/api/sessions`, { headers: bearer(agent.token) })).status).toBe(200);
    expect((await fetch(`${server.url}/api/sessions`, { headers: { cookie } })).status).toBe(200);
    const again = await socketsOnEveryPath(bearer(agent.token), agent.token);
    for (const s of Object.values(again)) expect(s.closeCode).toBeNull();
    for (const s of Object.values(again)) (s as unknown as { ws: WebSocket }).ws.close();
    await global.close();
  });
});
