/**
 * HTTP's time and connection limits on a real server, driven with raw sockets (the limits live
 * below the request handler). The timeouts are shortened for the test; the defaults are checked
 * to be what the server runs with.
 */
import { connect, type Socket } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { RawWebSocket } from "../testing/raw-websocket.ts";
import { startTestServer, type TestServer } from "../testing/test-server.ts";
import { waitFor } from "../testing/wait.ts";
import { DEFAULT_HTTP_LIMITS, HEADERS_TIMEOUT_MS, KEEP_ALIVE_TIMEOUT_MS, REQUEST_TIMEOUT_MS, responseDeadlineMs } from "./http-limits.ts";

/** Idle sockets the idle test opens, from this many addresses (below the per-address cap each). */
const IDLE_SOCKETS = 600;
const IDLE_ADDRESSES = 12;

const SHORT = { headersTimeoutMs: 1_000, requestTimeoutMs: 2_000, keepAliveTimeoutMs: 500, timeoutCheckIntervalMs: 100 };

type Probe = { socket: Socket; openedAt: number; closedAt: number | null; received: string };

const probes: Probe[] = [];
afterEach(() => {
  for (const p of probes.splice(0)) p.socket.destroy();
});

function probe(server: TestServer, localAddress = "127.0.0.1", send = ""): Probe {
  const { port } = new URL(server.url);
  const socket = connect({ host: "127.0.0.1", port: Number(port), localAddress });
  const p: Probe = { socket, openedAt: performance.now(), closedAt: null, received: "" };
  socket.setEncoding("latin1");
  socket.on("data", (d: string) => (p.received += d));
  socket.on("error", () => {});
  socket.on("close", () => (p.closedAt = performance.now()));
  if (send) socket.write(send);
  probes.push(p);
  return p;
}

const connected = (p: Probe) => new Promise<void>((resolve) => (p.socket.connecting ? p.socket.once("connect", () => resolve()) : resolve()));
const statusOf = (p: Probe) => Number(/^HTTP\/1\.1 (\d{3})/.exec(p.received)?.[1] ?? 0);
const openCount = (server: TestServer) => new Promise<number>((resolve, reject) => server.http.getConnections((err, n) => (err ? reject(err) : resolve(n))));

describe("HTTP timeouts", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ httpLimits: SHORT });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("the server runs with the default limits unless told otherwise", async () => {
    const plain = await startTestServer();
    try {
      expect([plain.http.headersTimeout, plain.http.requestTimeout, plain.http.keepAliveTimeout]).toEqual([HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS, KEEP_ALIVE_TIMEOUT_MS]);
    } finally {
      await plain.stop();
    }
  });

  it(`closes ${IDLE_SOCKETS} idle connections (nothing sent, or half a request line) after the headers timeout`, async () => {
    const idle: Probe[] = [];
    for (let i = 0; i < IDLE_SOCKETS; i++) idle.push(probe(server, `127.0.1.${1 + (i % IDLE_ADDRESSES)}`, i % 2 ? "GET /api/sess" : ""));
    await Promise.all(idle.map(connected));
    await waitFor(() => idle.every((p) => p.closedAt !== null), { timeout: 20_000, message: "every idle socket closed by the server" });
    const lifetimes = idle.map((p) => p.closedAt! - p.openedAt);
    // Not before the timeout, and each one answered 408 on its way out.
    expect(Math.min(...lifetimes)).toBeGreaterThanOrEqual(SHORT.headersTimeoutMs - 50);
    expect(idle.filter((p) => statusOf(p) === 408).length).toBe(IDLE_SOCKETS);
    console.log(`http idle: ${idle.length} idle sockets closed after the ${SHORT.headersTimeoutMs} ms headers timeout, in ${Math.round(Math.min(...lifetimes))}–${Math.round(Math.max(...lifetimes))} ms`);
  });

  it("closes a kept-alive connection that stays idle after its answer", async () => {
    const p = probe(server, "127.0.0.1", "GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n");
    await waitFor(() => p.received.includes('{"status":"ok"}'), { message: "the answer" });
    const answeredAt = performance.now();
    await waitFor(() => p.closedAt !== null, { timeout: 10_000, message: "closed by the server" });
    // After the server's own timeout, well before Node's default of 5 s.
    expect(p.closedAt! - answeredAt).toBeGreaterThanOrEqual(SHORT.keepAliveTimeoutMs - 100);
    expect(p.closedAt! - answeredAt).toBeLessThan(4_000);
  });

  it("answers a body that never arrives with 408 and closes the connection", async () => {
    const p = probe(server, "127.0.0.1", `POST /api/sessions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.token}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"comm`);
    await waitFor(() => p.closedAt !== null, { timeout: 10_000, message: "closed by the server" });
    expect(statusOf(p)).toBe(408);
    expect(p.closedAt! - p.openedAt).toBeGreaterThanOrEqual(SHORT.requestTimeoutMs - 50);
    expect(server.registry.list()).toEqual([]);
  });

  it("leaves WebSockets open past every HTTP timeout", async () => {
    const session = server.registry.create({ command: ["sleep", "60"] });
    const ws = await RawWebSocket.open(server.url, `/ws/s/${session.id}`, { headers: { authorization: `Bearer ${server.token}` } });
    expect(ws.status).toBe(101);
    // Both timeouts have fired for these two meanwhile.
    const idle = probe(server);
    const slowBody = probe(server, "127.0.0.1", `POST /api/login HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\n{`);
    await waitFor(() => idle.closedAt !== null && slowBody.closedAt !== null, { timeout: 10_000, message: "the HTTP sockets closed" });
    const pongs = ws.frames.length;
    ws.send(0x9, Buffer.from("still there?"));
    await waitFor(() => ws.frames.slice(pongs).some((f) => f.opcode === 0xa), { message: "pong" });
    ws.destroy();
  });

  it("cuts a large answer that is not read by its deadline, freeing what it pinned", async () => {
    const big = await startTestServer({
      bufferBytes: 32 * 1024 * 1024,
      // well past what the kernel's socket buffers take in on loopback
      httpLimits: { ...SHORT, responseDeadlineBaseMs: 1_000, responseMinBytesPerS: 1e12 },
    });
    try {
      const session = big.registry.create({ command: ["bash", "-c", "head -c 24000000 /dev/zero | tr '\\0' a; sleep 60"] });
      await waitFor(() => session.stats().end >= 24_000_000, { timeout: 60_000, message: "24 MB in the ring" });
      const before = await openCount(big);
      const p = probe(big, "127.0.0.1", `GET /api/sessions/${session.id}/buffer HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${big.token}\r\n\r\n`);
      p.socket.pause(); // never reads
      await waitFor(async () => (await openCount(big)) > before, { message: "connection counted" });
      const sentAt = performance.now();
      await waitFor(async () => (await openCount(big)) === before, { timeout: 20_000, message: "the unread answer's connection cut" });
      expect(performance.now() - sentAt).toBeGreaterThanOrEqual(900);
    } finally {
      await big.stop();
    }
  });

  it("gives a large answer time in proportion to its size", () => {
    expect(responseDeadlineMs(DEFAULT_HTTP_LIMITS, 4 * 1024 * 1024)).toBe(30_000 + 64_000);
  });
});

describe("HTTP connection caps", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ httpLimits: { maxConnectionsPerAddress: 4, maxConnections: 6 } });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("answers the connection past the per-address cap, then past the total cap, with 429 and lets others in", async () => {
    const mine = [0, 1, 2, 3].map(() => probe(server, "127.0.2.1"));
    await Promise.all(mine.map(connected));
    await waitFor(async () => (await openCount(server)) === 4, { message: "four counted" });
    const fifth = probe(server, "127.0.2.1", "GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n");
    await waitFor(() => fifth.closedAt !== null, { message: "the fifth refused" });
    expect(statusOf(fifth)).toBe(429);
    expect(fifth.received).toContain('"code":"RATE_LIMITED"');
    expect(fifth.received).toContain("127.0.2.1 already holds 4 HTTP connections, the limit per address");

    const other = [0, 1].map(() => probe(server, "127.0.2.2"));
    await Promise.all(other.map(connected));
    await waitFor(async () => (await openCount(server)) === 6, { message: "six counted" });
    const seventh = probe(server, "127.0.2.3", "GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n");
    await waitFor(() => seventh.closedAt !== null, { message: "the seventh refused" });
    expect(seventh.received).toContain("already holds 6 HTTP connections, its limit");

    // A slot given back is a slot to use again.
    mine[0]!.socket.destroy();
    await waitFor(async () => (await openCount(server)) === 5, { message: "one gone" });
    const again = probe(server, "127.0.2.1", "GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n");
    await waitFor(() => again.received.includes('{"status":"ok"}'), { message: "served again" });
  });

  it("does not count WebSockets: an upgraded connection gives its HTTP slot back", async () => {
    for (const p of probes.splice(0)) p.socket.destroy();
    await waitFor(async () => (await openCount(server)) === 0, { message: "all closed" });
    const session = server.registry.create({ command: ["sleep", "60"] });
    const sockets: RawWebSocket[] = [];
    for (let i = 0; i < 8; i++) {
      const ws = await RawWebSocket.open(server.url, `/ws/s/${session.id}`, { headers: { authorization: `Bearer ${server.token}` }, localAddress: "127.0.2.9" });
      expect(ws.status).toBe(101);
      sockets.push(ws);
    }
    const p = probe(server, "127.0.2.9", "GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n");
    await waitFor(() => p.received.includes('{"status":"ok"}'), { message: "plain HTTP still served" });
    for (const ws of sockets) ws.destroy();
  });
});
