import { connect as connectTcp } from "node:net";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocketServer, type WebSocket } from "ws";
import { encodeInput, encodePosition } from "../server/contract/index.ts";
import { startTestServer, type TestServer } from "../server/testing/test-server.ts";
import { waitFor } from "../server/testing/wait.ts";
import { FrameCounter } from "./frame-counter.ts";
import { StreamCounter } from "./stream-counter.ts";
import { HandshakeRefused, UpgradeHandshake } from "../server/testing/ws-handshake.ts";

/** Generous for a loaded 2-core machine; every wait ends on a condition, this is only the deadline. */
const WAIT_MS = 20_000;
/** The known output: 300 000 × `a` (no newline, so the PTY adds nothing), then END. */
const OUTPUT_BYTES = 300_000;
const PRINT_KNOWN = `stty -echo; printf R; read line; head -c ${OUTPUT_BYTES} /dev/zero | tr '\\0' a; printf END; read line`;
const EXPECTED = `R${"a".repeat(OUTPUT_BYTES)}END`;
/** Far more than the server queues (4 MiB) plus what loopback TCP buffers hold for a reader that stopped. */
const FLOOD_BYTES = 48 * 1024 * 1024;

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.stop();
});

const session = (script: string) => server.createSession({ command: ["sh", "-c", script] });
const connect = (sessionId: string, client?: string) => FrameCounter.connect({ url: server.url, token: server.token, sessionId, client });

async function bufferEnd(sessionId: string): Promise<{ end: number; text: string }> {
  const res = await server.api(`/api/sessions/${sessionId}/buffer`);
  return { end: Number(res.headers.get("x-webmux-end")), text: Buffer.from(await res.arrayBuffer()).toString("latin1") };
}

/** An observer with nothing but a socket: keeps every byte the server sends after the 101, and counts them live. */
async function openRecorder(sessionId: string): Promise<{ chunks: Buffer[]; live: StreamCounter; stop: () => void }> {
  const url = new URL(server.url);
  const tcp = connectTcp({ host: url.hostname, port: Number(url.port) });
  const handshake = new UpgradeHandshake();
  tcp.write(handshake.request(`/ws/s/${sessionId}?client=recorder`, url.host, { Authorization: `Bearer ${server.token}` }));
  const chunks: Buffer[] = [];
  const live = new StreamCounter();
  let upgraded = false;
  tcp.on("data", (chunk: Buffer) => {
    const rest = upgraded ? chunk : handshake.feed(chunk);
    if (rest === null) return;
    upgraded = true;
    chunks.push(rest);
    live.push(rest);
  });
  // The attach sequence ends with a status frame.
  await waitFor(() => live.statusFrames > 0, { timeout: WAIT_MS, message: "recorder attached" });
  return { chunks, live, stop: () => tcp.destroy() };
}

describe("FrameCounter against the server", () => {
  it("counts exactly the bytes a program prints after the keystroke it was sent", async () => {
    const info = await session(PRINT_KNOWN);
    const controller = await connect(info.id, "fc-controller");
    await controller.until(() => controller.offset >= 1, WAIT_MS, "ready marker");
    const before = controller.outputBytes;
    controller.send("\r");
    await controller.until(() => controller.outputBytes - before >= OUTPUT_BYTES + 3, WAIT_MS, "END");
    expect(controller.outputBytes - before).toBe(OUTPUT_BYTES + 3);
    expect(controller.outputTail(5)).toBe("aaEND");
    expect(controller.invalidFrames).toEqual([]);
    // The server's own record of the output: the same bytes, ending where the counter's offset is.
    const ring = await bufferEnd(info.id);
    expect(ring.text).toBe(EXPECTED);
    expect(controller.offset).toBe(ring.end);
    expect(controller.wireBytes).toBeGreaterThan(OUTPUT_BYTES);
    await controller.close();
    expect(controller.closeCode).toBe(1000);
  });

  it("counts a recorded server stream the same however its frames are split into chunks", async () => {
    const info = await session(PRINT_KNOWN);
    const controller = await connect(info.id, "fc-controller");
    // The ready marker printed before the recorder attaches: it reaches the recorder in the
    // snapshot, never as output, whichever process runs first.
    await controller.until(() => controller.offset >= 1, WAIT_MS, "ready marker");
    const recorder = await openRecorder(info.id);
    await waitFor(() => recorder.live.offset >= 1, { timeout: WAIT_MS, message: "ready marker at the recorder" });
    controller.send("\r");
    await waitFor(() => recorder.live.outputTail(3) === "END", { timeout: WAIT_MS, message: "END at the recorder" });
    recorder.stop();
    const stream = Buffer.concat(recorder.chunks);
    const counted = (c: StreamCounter) => ({ offset: c.offset, output: c.outputBytes, frames: c.outputFrames, tail: c.outputTail(5), invalid: c.invalidFrames });
    const expected = counted(recorder.live);
    expect(expected).toMatchObject({ offset: EXPECTED.length, output: OUTPUT_BYTES + 3, tail: "aaEND", invalid: [] });
    const byteByByte = new StreamCounter();
    for (let i = 0; i < stream.length; i++) byteByByte.push(stream.subarray(i, i + 1));
    expect(counted(byteByByte)).toEqual(expected);
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: stream.length - 1 }), { maxLength: 30 }), (cuts) => {
        const points = [0, ...cuts.sort((a, b) => a - b), stream.length];
        const counter = new StreamCounter();
        for (let i = 1; i < points.length; i++) counter.push(stream.subarray(points[i - 1]!, points[i]!));
        expect(counted(counter)).toEqual(expected);
      }),
      { numRuns: 100 },
    );
    await controller.close();
  });

  it("delivers a keystroke to the program, then records its exit code and the 4410 close", async () => {
    const info = await session(`stty -echo; printf R; read line; printf "got:%s" "$line"; exit 7`);
    const client = await connect(info.id);
    await client.until(() => client.offset >= 1, WAIT_MS, "ready marker");
    client.send("hello webmux\r");
    await client.until(() => client.closed, WAIT_MS, "close");
    expect(client.outputTail(16)).toBe("got:hello webmux");
    expect(client.exitCode).toBe(7);
    expect(client.closeCode).toBe(4410);
  });

  it("is refused an unknown session with 4404", async () => {
    await expect(connect("zzzz0000")).rejects.toThrow(/closed \(4404\)/);
  });

  it("records 4408 for an observer that stopped reading while the controller kept up", async () => {
    const info = await session(`stty -echo; printf R; read line; head -c ${FLOOD_BYTES} /dev/zero | tr '\\0' a; printf END; read line`);
    const controller = await connect(info.id, "fc-controller");
    const observer = await connect(info.id, "fc-observer");
    await observer.until(() => observer.offset >= 1, WAIT_MS, "ready marker");
    observer.socket.pause();
    controller.send("\r");
    await controller.until(() => controller.outputTail(3) === "END", WAIT_MS * 3, "END at the controller");
    observer.socket.resume();
    await observer.until(() => observer.closed, WAIT_MS, "observer cut");
    expect(observer.closeCode).toBe(4408);
    expect(observer.outputBytes).toBeLessThan(FLOOD_BYTES);
    expect(controller.closed).toBe(false);
    await controller.close();
  });

  it("refuses a wrong token with the HTTP status", async () => {
    const info = await session("read line");
    const refused = FrameCounter.connect({ url: server.url, token: "wrong-token", sessionId: info.id });
    await expect(refused).rejects.toBeInstanceOf(HandshakeRefused);
    await expect(refused).rejects.toMatchObject({ status: 401 });
  });
});

describe("FrameCounter against the ws library's server", () => {
  let wss: WebSocketServer;
  let url: string;
  const peers: WebSocket[] = [];
  beforeAll(async () => {
    wss = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    await new Promise<void>((resolve) => wss.once("listening", () => resolve()));
    const address = wss.address();
    if (address === null || typeof address === "string") throw new Error("ws server has no port");
    url = `http://127.0.0.1:${address.port}`;
    wss.on("connection", (ws) => {
      peers.push(ws);
      ws.send(encodePosition({ generation: "g-1", mode: "reset", start: 0, end: 0, truncated: false }));
    });
  });
  afterAll(async () => {
    await new Promise((resolve) => wss.close(resolve));
  });

  it("answers a ping, sends masked frames of every length form, and echoes the server's close code", async () => {
    const client = await FrameCounter.connect({ url, token: "t", sessionId: "abcd1234" });
    const peer = peers.at(-1)!;
    const pong = new Promise<Buffer>((resolve) => peer.once("pong", resolve));
    peer.ping("are you there");
    expect((await pong).toString()).toBe("are you there");
    const received: Buffer[] = [];
    peer.on("message", (data: Buffer) => received.push(data));
    const keys = [Buffer.from("x"), Buffer.alloc(200, 0x62), Buffer.alloc(70_000, 0x63)];
    for (const key of keys) client.send(key);
    await expect.poll(() => received.length, { timeout: WAIT_MS }).toBe(keys.length);
    expect(received.map((r) => r.equals(encodeInput(keys[received.indexOf(r)]!)))).toEqual([true, true, true]);
    const peerClosed = new Promise<number>((resolve) => peer.once("close", (code) => resolve(code)));
    peer.close(4408, "too slow");
    await client.until(() => client.closed, WAIT_MS, "close");
    expect(client.closeCode).toBe(4408);
    expect(await peerClosed).toBe(4408);
  });
});
