import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { CloseCode } from "../contract/protocol.ts";
import type { SessionInfo } from "../contract/types.ts";
import { TerminalClient } from "../testing/terminal-client.ts";
import { startTestServer } from "../testing/test-server.ts";
import { waitFor } from "../testing/wait.ts";
import { fetchDebugStats } from "../testing/debug-stats.ts";
import { startServerProcess } from "../testing/webmux-process.ts";
import { assertSameBytes, receivedFromStart } from "../testing/stream-check.ts";

/** Clients attached when the program exits (docs/design.md § Hardening and limits). */
const ATTACHED = 20;
/** Lines the program prints just before it exits: its last bytes must reach every client before the exit frame. */
const FINAL_LINES = 50_000;

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("a program that exits with 20 clients attached", () => {
  it("gives every client its replay, every last byte, status, the exit frame, then close 4410", async () => {
    const server = await startTestServer();
    try {
      const session = server.registry.create({ command: ["sh", "-c", `stty -echo; echo started; read go; seq 1 ${FINAL_LINES}; exit 7`] });
      const clients: TerminalClient[] = [];
      for (let i = 0; i < ATTACHED; i++) clients.push(await TerminalClient.connect(server.url, session.id, { token: server.token, client: `attached-${i}` }));
      await waitFor(() => clients.every((c) => c.shownText.includes("started")), { message: "all attached" });
      clients[0]!.type("\r");
      const codes = await Promise.all(clients.map((c) => c.closed()));
      expect(codes).toEqual(Array(ATTACHED).fill(CloseCode.EXITED));
      const ring = Buffer.from(session.readOutput());
      expect(ring.toString()).toContain(`\r\n${FINAL_LINES}\r\n`);
      for (const [i, c] of clients.entries()) {
        const types = c.types();
        expect(types.slice(0, 4), `client ${i}`).toEqual(["control", "position", "snapshot", "status"]);
        expect(types.slice(-2), `client ${i}`).toEqual(["status", "exit"]);
        expect(new Set(types.slice(4, -2)), `client ${i}`).toEqual(new Set(["output"]));
        expect(c.exitCode).toBe(7);
        expect(c.status).toMatchObject({ status: "exited", exitCode: 7 });
        assertSameBytes(receivedFromStart(c), ring, `client ${i}`);
      }
      expect(server.terminals.stats()).toEqual({ streams: 0, connections: 0 });
    } finally {
      await server.stop();
    }
  });
});

/** Open a WebSocket and remember how it was closed. */
function watchSocket(url: string, token: string): Promise<{ ws: WebSocket; closed: Promise<number> }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url.replace(/^http/, "ws"), { headers: { authorization: `Bearer ${token}` } });
    const closed = new Promise<number>((r) => ws.once("close", (code) => r(code)));
    ws.once("open", () => resolve({ ws, closed }));
    ws.once("error", reject);
  });
}

describe("SIGTERM on `webmux serve`", () => {
  it("closes every WebSocket with 1001, ends the programs, leaves valid JSON, and a second start loads it", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "webmux-sigterm-"));
    dirs.push(dataDir);
    const first = await startServerProcess(dataDir, ["--max-connections-per-address", "40"], null);
    const headers = { authorization: `Bearer ${first.token}`, "content-type": "application/json" };
    expect((await fetch(`${first.url}/api/settings`, { method: "PUT", headers, body: JSON.stringify({ open_api: { enabled: true } }) })).status).toBe(200);
    const tokenRes = await fetch(`${first.url}/api/tokens`, { method: "POST", headers, body: JSON.stringify({ name: "survivor", capabilities: ["terminal:read"] }) });
    const agentToken = ((await tokenRes.json()) as { token: string }).token;
    const session = (await (await fetch(`${first.url}/api/sessions`, { method: "POST", headers, body: JSON.stringify({ command: ["sleep", "300"] }) })).json()) as SessionInfo;
    expect((await fetchDebugStats(first.url, first.token)).connectionLimits.perAddress).toBe(40);

    const terminals = await Promise.all([0, 1, 2].map(() => TerminalClient.connect(first.url, session.id, { token: first.token })));
    const others = await Promise.all(["/ws/sessions", "/ws/settings", "/ws/agent"].map((path) => watchSocket(first.url + path, first.token)));
    await waitFor(async () => (await fetchDebugStats(first.url, first.token)).openSockets === 6, { message: "six sockets open" });

    first.proc.kill("SIGTERM");
    expect(await first.exit).toBe(0);
    expect(await Promise.all(terminals.map((t) => t.closed()))).toEqual([1001, 1001, 1001]);
    expect(await Promise.all(others.map((o) => o.closed))).toEqual([1001, 1001, 1001]);
    expect(() => process.kill(session.pid!, 0)).toThrow();

    const files = readdirSync(dataDir).filter((f) => f.endsWith(".json"));
    expect(files.sort()).toEqual(["agent-tokens.json", "global-token.json", "settings.json"]);
    for (const f of files) expect(() => JSON.parse(readFileSync(join(dataDir, f), "utf8")), f).not.toThrow();
    expect(readdirSync(dataDir).filter((f) => f.endsWith(".tmp"))).toEqual([]);

    const second = await startServerProcess(dataDir, [], null);
    try {
      expect(second.token).toBe(first.token);
      const settings = await (await fetch(`${second.url}/api/settings`, { headers: { authorization: `Bearer ${second.token}` } })).json();
      expect(settings).toEqual({ open_api: { enabled: true } });
      // the agent token created before the restart still authenticates, with its capabilities
      expect((await fetch(`${second.url}/api/sessions`, { headers: { authorization: `Bearer ${agentToken}` } })).status).toBe(200);
    } finally {
      await second.stop();
    }
  }, 60_000);
});
