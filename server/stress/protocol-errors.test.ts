/**
 * WebSocket protocol errors on every WebSocket path, against a real server process: each of the
 * four kinds of frame `ws` refuses, sent right after the handshake, must end that one connection
 * and nothing else (docs/design.md, Hardening and limits).
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_CLIENT_FRAME_BYTES } from "../contract/protocol.ts";
import type { SessionInfo } from "../contract/types.ts";
import { FAKE_CLAUDE } from "../testing/hybrid-fixture.ts";
import { TEST_SHELL_COMMAND } from "../testing/test-server.ts";
import { waitFor } from "../testing/wait.ts";
import { Opcode, RawWebSocket } from "../testing/raw-websocket.ts";
import { startServerProcess, type ServerProcess } from "../testing/webmux-process.ts";

/** The four frames of the kinds `ws` refuses with an error event (RFC 6455 §5.2, §5.3, §8.1). */
export const BAD_FRAMES: Record<string, Buffer> = {
  "an oversized frame": RawWebSocket.frame(Opcode.BINARY, Buffer.alloc(16), { announce: MAX_CLIENT_FRAME_BYTES + 1 }).subarray(0, 14),
  "an unmasked client frame": Buffer.from([0x82, 0x03, 0x61, 0x62, 0x63]),
  "invalid UTF-8 in a text frame": RawWebSocket.frame(Opcode.TEXT, Buffer.from([0xc3, 0x28, 0xff, 0xfe])),
  "a bad opcode": RawWebSocket.frame(0x3, Buffer.from("x")),
  "a reserved bit": (() => {
    const frame = RawWebSocket.frame(Opcode.BINARY, Buffer.from("x"));
    // RSV2: no extension defines it (RSV1 would be permessage-deflate's on a compress=1 socket).
    frame[0]! |= 0x20;
    return frame;
  })(),
};

let server: ServerProcess;
let dataDir: string;
let plain: SessionInfo;
let hybridAtTerminal: SessionInfo;
let hybridAtChat: SessionInfo;

async function api(path: string, init: RequestInit & { json?: unknown } = {}): Promise<Response> {
  return fetch(server.url + path, {
    ...init,
    headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
    body: init.json === undefined ? init.body : JSON.stringify(init.json),
  });
}

async function create(body: Record<string, unknown>): Promise<SessionInfo> {
  const res = await api("/api/sessions", { method: "POST", json: body });
  if (res.status !== 201) throw new Error(`create: ${res.status} ${await res.text()}`);
  return (await res.json()) as SessionInfo;
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "webmux-protocol-errors-"));
  server = await startServerProcess(dataDir, ["--open-api"]);
  plain = await create({ command: TEST_SHELL_COMMAND });
  const project = join(dataDir, "project");
  mkdirSync(project);
  const fake = { WEBMUX_CLAUDE_BIN: FAKE_CLAUDE, CLAUDE_CONFIG_DIR: join(dataDir, "claude"), FAKE_CLAUDE_DELTA_MS: "5" };
  hybridAtTerminal = await create({ hybrid: { agent: "claude" }, cwd: project, env: fake });
  hybridAtChat = await create({ hybrid: { agent: "claude", end: "chat" }, cwd: project, env: fake });
});

afterAll(async () => {
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Every WebSocket path, in each state a socket can be in right after its upgrade. */
function paths(): string[] {
  const base = [
    `/ws/s/${plain.id}`,
    "/ws/s/zzzzzzzz", // unknown session: closed with 4404 after the upgrade
    `/ws/s/${plain.id}/chat`, // not a hybrid session: closed after the upgrade
    `/ws/s/${hybridAtTerminal.id}`,
    `/ws/s/${hybridAtTerminal.id}/chat`,
    `/ws/s/${hybridAtChat.id}`, // the agent is at its chat end: closed with 4409 after the upgrade
    `/ws/s/${hybridAtChat.id}/chat`,
    "/ws/sessions",
    "/ws/settings",
    "/ws/agent",
  ];
  return [...base, ...base.map((p) => `${p}?compress=1`)];
}

describe("a WebSocket protocol error", () => {
  it("ends only its own connection, on every path, for each kind of bad frame", async () => {
    const outcomes: string[] = [];
    for (const path of paths()) {
      for (const [what, frame] of Object.entries(BAD_FRAMES)) {
        const ws = await RawWebSocket.open(server.url, path, {
          headers: { authorization: `Bearer ${server.token}`, ...(path.includes("compress=1") ? { "sec-websocket-extensions": "permessage-deflate" } : {}) },
        });
        expect([path, ws.status]).toEqual([path, 101]);
        await ws.write(frame);
        await ws.closed();
        outcomes.push(`${path} ${what}: ${ws.closeCode}`);
      }
    }
    // The process lives on: it still answers, and the plain session still runs a command.
    expect(server.proc.exitCode, server.stderr()).toBeNull();
    expect((await fetch(`${server.url}/api/health`)).status).toBe(200);
    const info = (await (await api(`/api/sessions/${plain.id}`)).json()) as SessionInfo;
    expect(info.status).toBe("running");
    expect(server.stderr()).not.toMatch(/uncaught|unhandled/i);
    // Each connection was closed by the server: with the matching protocol code where the socket
    // was still open, or with the code it was already being closed with.
    for (const line of outcomes) expect(line).toMatch(/: (1002|1007|1009|4404|4409)$/);
    expect(outcomes.length).toBe(paths().length * Object.keys(BAD_FRAMES).length);
  });

  it("on an open terminal socket closes it with the protocol's code", async () => {
    const expected: Record<string, number> = {
      "an oversized frame": 1009,
      "an unmasked client frame": 1002,
      "invalid UTF-8 in a text frame": 1007,
      "a bad opcode": 1002,
      "a reserved bit": 1002,
    };
    for (const [what, frame] of Object.entries(BAD_FRAMES)) {
      const ws = await RawWebSocket.open(server.url, `/ws/s/${plain.id}`, { headers: { authorization: `Bearer ${server.token}` } });
      await waitFor(() => ws.frames.length > 0, { message: "first frame" });
      await ws.write(frame);
      await ws.closed();
      expect([what, ws.closeCode]).toEqual([what, expected[what]]);
    }
  });
});
