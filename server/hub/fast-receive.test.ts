import { randomFillSync } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocketServer, type WebSocket } from "ws";
import { decodeServerFrame, encodeClientMessage } from "../contract/frames.ts";
import { terminalStreamPath } from "../contract/terminal-query.ts";
import { RawWebSocket } from "../testing/raw-websocket.ts";
import { startTestServer, type TestServer } from "../testing/test-server.ts";
import { waitFor } from "../testing/wait.ts";
import { encodeClientFrame } from "../testing/ws-frame-parser.ts";
import type { Socket } from "node:net";
import { readIntoOwnBuffer } from "../pty/own-read-buffer.ts";
import { installFastReceive } from "./fast-receive.ts";

/** Small enough that frames of 101..125 bytes are oversized: the fast path must leave them to ws. */
const FUZZ_MAX_PAYLOAD = 100;
const FUZZ_CASES = 150;

/** What a server saw of one connection: every message in order, the error ws raised, the close code it sent. */
type Outcome = { messages: string[]; error: string | null; closeSent: number | null };

/** Random generator with a seed, so a failing case can be replayed. */
function prng(seed: number): (n: number) => number {
  let s = seed >>> 0 || 1;
  return (n) => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) % n;
  };
}

function bytes(rand: (n: number) => number, n: number): Buffer {
  const out = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) out[i] = rand(256);
  return out;
}

function mask(rand: (n: number) => number): Uint8Array {
  return rand(5) === 0 ? new Uint8Array(4) : bytes(rand, 4);
}

/** One piece of a hostile stream: mostly the frames the fast path takes, and every kind it must leave to ws. */
function piece(rand: (n: number) => number): Buffer {
  const kind = rand(16);
  switch (kind) {
    case 0:
    case 1:
    case 2:
    case 3:
      return encodeClientFrame(0x02, bytes(rand, 1 + rand(8)), mask(rand)); // a keystroke
    case 4:
      return encodeClientFrame(0x02, bytes(rand, rand(126)), mask(rand)); // up to 125, some oversized, some empty
    case 5:
      return encodeClientFrame(0x02, bytes(rand, 126 + rand(200)), mask(rand)); // 16-bit length
    case 6:
      return encodeClientFrame(0x01, rand(2) ? Buffer.from("héllo") : Buffer.from([0xc3, 0x28]), mask(rand)); // text, valid or not
    case 7:
      return encodeClientFrame(0x09 + rand(2), bytes(rand, rand(10)), mask(rand)); // ping or pong
    case 8:
      return Buffer.concat([
        encodeClientFrame(0x02, bytes(rand, 3), mask(rand), { fin: false }),
        encodeClientFrame(0x00, bytes(rand, 3), mask(rand), { fin: rand(3) !== 0 }),
      ]); // fragmented
    case 9: {
      const frame = Buffer.from(encodeClientFrame(0x02, bytes(rand, 1 + rand(5)), mask(rand)));
      frame[1] = frame[1]! & 0x7f; // unmasked (the payload then reads as mask and data)
      return frame;
    }
    case 10: {
      const frame = Buffer.from(encodeClientFrame(0x02, bytes(rand, 1 + rand(5)), mask(rand)));
      frame[0] = frame[0]! | (0x10 << rand(3)); // an RSV bit
      return frame;
    }
    case 11: {
      const frame = Buffer.from(encodeClientFrame(0x02, bytes(rand, 1 + rand(20)), mask(rand)));
      const bit = rand(frame.length * 8);
      frame[bit >> 3] = frame[bit >> 3]! ^ (1 << (bit & 7)); // one flipped bit anywhere
      return frame;
    }
    case 12: {
      const frame = encodeClientFrame(0x02, bytes(rand, 2 + rand(20)), mask(rand));
      return frame.subarray(0, 1 + rand(frame.length - 1)); // cut short: later bytes are read as its rest
    }
    case 13: {
      const code = [1000, 1001, 999, 1005, 4000, 5000][rand(6)]!;
      const payload = Buffer.allocUnsafe(2);
      payload.writeUInt16BE(code);
      return encodeClientFrame(0x08, payload, mask(rand)); // a close frame, its code valid or not
    }
    case 14:
      return encodeClientFrame(0x03 + rand(4), bytes(rand, rand(5)), mask(rand)); // reserved opcode
    default:
      return bytes(rand, 1 + rand(12)); // garbage
  }
}

/** One case: the stream, and where it is cut into separate writes. */
function fuzzCase(seed: number): { stream: Buffer; cuts: number[] } {
  const rand = prng(seed);
  const pieces: Buffer[] = [];
  const count = 1 + rand(8);
  for (let i = 0; i < count; i++) pieces.push(piece(rand));
  const stream = Buffer.concat(pieces);
  const cuts = [...new Set(Array.from({ length: rand(4) }, () => rand(stream.length)))].sort((a, b) => a - b);
  return { stream, cuts };
}

/** A plain ws server on port 0; with `fast`, each socket goes through installFastReceive as the acceptor's do. */
async function wsServer(fast: boolean): Promise<{ http: Server; port: number; outcomes: Map<string, Outcome & { done: Promise<void> }> }> {
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: FUZZ_MAX_PAYLOAD, clientTracking: false });
  const outcomes = new Map<string, Outcome & { done: Promise<void> }>();
  const http = createServer();
  http.on("upgrade", (req, socket, head) => {
    const id = new URL(req.url ?? "/", "http://x").searchParams.get("case") ?? "";
    wss.handleUpgrade(req, socket, head, (ws: WebSocket) => {
      let closed!: () => void;
      const outcome: Outcome & { done: Promise<void> } = { messages: [], error: null, closeSent: null, done: new Promise((r) => (closed = r)) };
      outcomes.set(id, outcome);
      if (fast) {
        expect(installFastReceive(ws)).toBe(true);
        // The TCP socket reads into its own buffer from now on: it cannot be switched again.
        expect(readIntoOwnBuffer((ws as unknown as { _socket: Socket })._socket, () => {})).toBe(false);
      }
      ws.on("message", (data: Buffer, isBinary) => outcome.messages.push(`${isBinary ? "b" : "t"}:${Buffer.from(data).toString("hex")}`));
      ws.on("error", (err: Error & { code?: string }) => (outcome.error = err.code ?? err.message));
      ws.on("close", () => closed());
    });
  });
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
  return { http, port: (http.address() as AddressInfo).port, outcomes };
}

/** Upgrade a raw TCP connection, its writes sent as they are made (no Nagle), so the server may read them apart. */
async function rawUpgrade(url: string, path: string, headers: Record<string, string> = {}): Promise<RawWebSocket> {
  const client = await RawWebSocket.open(url, path, { headers });
  client.socket.setNoDelay(true);
  if (!client.upgraded) throw new Error(`handshake answered ${client.status}`);
  return client;
}

/** Send the case's stream in its writes, end our side, and wait until the server closed the socket. */
async function play(port: number, id: string, outcomes: Map<string, Outcome & { done: Promise<void> }>, c: { stream: Buffer; cuts: number[] }): Promise<Outcome> {
  const client = await rawUpgrade(`http://127.0.0.1:${port}`, `/?case=${id}`);
  const tcp = client.socket;
  let from = 0;
  for (const cut of [...c.cuts, c.stream.length]) {
    if (cut > from && tcp.writable) tcp.write(c.stream.subarray(from, cut));
    from = cut;
    // Let the write leave on its own, so the server may read the pieces apart.
    await new Promise((r) => setImmediate(r));
  }
  tcp.end();
  await client.closed();
  const outcome = outcomes.get(id);
  if (!outcome) throw new Error(`server never saw case ${id}`);
  await outcome.done;
  return { messages: outcome.messages, error: outcome.error, closeSent: client.closeCode };
}

describe("fast receive: differential fuzz against ws's own Receiver", () => {
  let plain: Awaited<ReturnType<typeof wsServer>>;
  let fast: Awaited<ReturnType<typeof wsServer>>;
  beforeAll(async () => {
    plain = await wsServer(false);
    fast = await wsServer(true);
  });
  afterAll(async () => {
    await new Promise((r) => plain.http.close(r));
    await new Promise((r) => fast.http.close(r));
  });

  it(`decides ${FUZZ_CASES} random and corrupt streams exactly as ws does: same messages in the same order, same error, same close code`, async () => {
    const seed0 = Number(process.env.FAST_RECEIVE_SEED ?? Date.now() % 100_000);
    let fastFrames = 0;
    for (let i = 0; i < FUZZ_CASES; i++) {
      const seed = seed0 + i;
      const c = fuzzCase(seed);
      const [expected, actual] = await Promise.all([play(plain.port, `p${seed}`, plain.outcomes, c), play(fast.port, `f${seed}`, fast.outcomes, c)]);
      expect(actual, `seed ${seed}, stream ${c.stream.toString("hex")}, cuts ${c.cuts.join(",")}`).toEqual(expected);
      fastFrames += expected.messages.length;
    }
    // The streams did carry messages (the fast path had work), and some ended in protocol errors.
    expect(fastFrames).toBeGreaterThan(FUZZ_CASES / 2);
  }, 60_000);

  it("keeps order when many keystrokes, a long frame and a split frame share the socket's reads", async () => {
    const key = (b: number) => encodeClientFrame(0x02, Buffer.from([b]), randomFillSync(new Uint8Array(4)));
    const long = encodeClientFrame(0x02, Buffer.alloc(90, 0x4c), randomFillSync(new Uint8Array(4)));
    const tail = key(0x5a);
    const stream = Buffer.concat([key(0x41), key(0x42), long, key(0x43), tail.subarray(0, 3)]);
    const outcome = await play(fast.port, "order", fast.outcomes, { stream: Buffer.concat([stream, tail.subarray(3)]), cuts: [stream.length] });
    expect(outcome.messages).toEqual(["b:41", "b:42", `b:${"4c".repeat(90)}`, "b:43", "b:5a"]);
    expect(outcome.error).toBeNull();
  });
});

describe("fast receive on a real server and a real bash", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server.stop();
  });

  it("a command typed as single-key frames, with a long frame and a frame split across writes among them, runs as typed", async () => {
    const session = await server.createSession();
    const client = await rawUpgrade(server.url, terminalStreamPath(session.id, { client: "fast-receive-test" }), { authorization: `Bearer ${server.token}` });
    const tcp = client.socket;
    try {
      const output = () =>
        client
          .messages()
          .map((bytes) => decodeServerFrame(bytes))
          .map((message) => (message.type === "output" ? Buffer.from(message.data).toString("latin1") : ""))
          .join("");
      // The replay has arrived: the stream is attached (bash reads what is typed whenever it is ready).
      await waitFor(() => client.frames.length > 0, { timeout: 30_000, message: "the replay" });
      const input = (text: string) => encodeClientFrame(0x02, encodeClientMessage({ type: "input", data: Buffer.from(text) }), randomFillSync(new Uint8Array(4)));
      const longArg = "B".repeat(300);
      const keys = [..."echo "].map(input);
      const split = input("$");
      const stream = Buffer.concat([...keys, input(`"${longArg}" `), split.subarray(0, 4)]);
      tcp.write(stream);
      await new Promise((r) => setImmediate(r));
      tcp.write(Buffer.concat([split.subarray(4), ...[..."((6*7))\r"].map(input)]));
      await waitFor(() => output().includes(`${longArg} 42\r\n`), { timeout: 30_000, message: "the command's output" });
    } finally {
      tcp.destroy();
    }
  }, 60_000);
});
