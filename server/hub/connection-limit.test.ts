import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fetchDebugStats } from "../testing/debug-stats.ts";
import { RawWebSocket } from "../testing/raw-websocket.ts";
import { startTestServer, type TestServer } from "../testing/test-server.ts";
import { waitFor } from "../testing/wait.ts";
import { ConnectionLimiter, connectionAddress, connectionLimits, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_CONNECTIONS_PER_ADDRESS } from "./connection-limit.ts";

describe("ConnectionLimiter", () => {
  it("refuses past the per-address and the total limit, and a slot comes back exactly once", () => {
    const limiter = new ConnectionLimiter({ perAddress: 2, total: 3 });
    const a1 = limiter.take("a");
    limiter.take("a");
    expect(limiter.refusal("a")).toMatch(/a already holds 2 WebSockets, the limit per address/);
    expect(limiter.refusal("b")).toBeNull();
    limiter.take("b");
    expect(limiter.refusal("c")).toMatch(/already holds 3 WebSockets, its limit/);
    a1();
    a1();
    expect(limiter.total).toBe(2);
    expect(limiter.of("a")).toBe(1);
    expect(limiter.refusal("a")).toBeNull();
  });

  it("counts an IPv4 peer on a dual-stack socket as its IPv4 address, and rejects nonsense limits", () => {
    expect(connectionAddress("::ffff:10.0.0.7")).toBe("10.0.0.7");
    expect(connectionAddress("::1")).toBe("::1");
    expect(connectionAddress(undefined)).toBe("unknown");
    expect(connectionLimits({})).toEqual({ perAddress: DEFAULT_MAX_CONNECTIONS_PER_ADDRESS, total: DEFAULT_MAX_CONNECTIONS });
    expect(() => new ConnectionLimiter({ perAddress: 0, total: 5 })).toThrow(RangeError);
  });
});

describe("connection cap on the server", () => {
  let server: TestServer;
  let sessionPath: string;
  const opened: RawWebSocket[] = [];
  beforeAll(async () => {
    server = await startTestServer({ maxConnectionsPerAddress: 3, maxConnections: 5 });
    sessionPath = `/ws/s/${server.registry.create({ command: ["sleep", "60"] }).id}`;
  });
  afterAll(async () => {
    for (const ws of opened) ws.destroy();
    await server?.stop();
  });
  const auth = () => ({ authorization: `Bearer ${server.token}` });
  const open = async (path: string, localAddress: string) => {
    const ws = await RawWebSocket.open(server.url, path, { headers: auth(), localAddress });
    opened.push(ws);
    return ws;
  };
  const expectRefused = (ws: RawWebSocket, message: RegExp) => {
    expect(ws.status).toBe(429);
    expect(ws.head).not.toMatch(/upgrade/i);
    expect(JSON.parse(ws.body)).toEqual({ error: { code: "RATE_LIMITED", message: expect.stringMatching(message) } });
  };

  it("refuses the 4th socket of one address and the 6th in all with 429 before upgrading, on every endpoint", async () => {
    for (let i = 0; i < 3; i++) expect((await open(sessionPath, "127.0.0.1")).status).toBe(101);
    expectRefused(await open(sessionPath, "127.0.0.1"), /127\.0\.0\.1 already holds 3 WebSockets/);
    expectRefused(await open("/ws/sessions", "127.0.0.1"), /limit per address/);
    // another address still has room, up to the total
    expect((await open("/ws/sessions", "127.0.0.2")).status).toBe(101);
    expect((await open(sessionPath, "127.0.0.2")).status).toBe(101);
    expectRefused(await open("/ws/settings", "127.0.0.3"), /already holds 5 WebSockets, its limit/);
    expect((await fetchDebugStats(server.url, server.token)).openSockets).toBe(5);
    // plain HTTP is not capped
    expect((await server.api("/api/sessions")).status).toBe(200);
  });

  it("gives a slot back when a socket closes, however it closed", async () => {
    const first = opened.find((ws) => ws.upgraded)!;
    first.destroy();
    await waitFor(async () => (await fetchDebugStats(server.url, server.token)).openSockets === 4, { message: "slot given back" });
    expect((await open(sessionPath, "127.0.0.1")).status).toBe(101);
    expectRefused(await open(sessionPath, "127.0.0.4"), /its limit/);
  });
});
