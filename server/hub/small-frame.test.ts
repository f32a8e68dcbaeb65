/**
 * sendSmallFrameDirect against real ws sockets: small frames written straight to the socket and
 * larger ones sent through ws arrive as the same binary messages, in order; with permessage-deflate
 * negotiated (or payloads over 125 bytes) it declines and writes nothing.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, expect, it } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import { waitFor } from "../testing/wait.ts";
import { sendSmallFrameDirect, SMALL_FRAME_MAX_BYTES } from "./small-frame.ts";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function connected(deflate: boolean): Promise<{ server: WebSocket; client: WebSocket; received: Buffer[] }> {
  const http: Server = createServer();
  const wss = new WebSocketServer({ server: http, perMessageDeflate: deflate });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const serverSide = new Promise<WebSocket>((resolve) => wss.once("connection", resolve));
  const client = new WebSocket(`ws://127.0.0.1:${(http.address() as AddressInfo).port}/`, { perMessageDeflate: deflate });
  const received: Buffer[] = [];
  client.on("message", (data, isBinary) => {
    expect(isBinary).toBe(true);
    received.push(data as Buffer);
  });
  await new Promise((resolve) => client.once("open", resolve));
  const server = await serverSide;
  cleanups.push(async () => {
    client.terminate();
    server.terminate();
    wss.close();
    await new Promise<void>((resolve) => http.close(() => resolve()));
  });
  return { server, client, received };
}

const bytes = (n: number, seed: number) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 7 + seed) & 0xff));

it("writes small frames itself and keeps their order with the ones ws sends", async () => {
  const { server, received } = await connected(false);
  const sent: Buffer[] = [];
  let done = 0;
  const send = (payload: Buffer) => {
    sent.push(payload);
    const cb = (err?: Error) => {
      expect(err ?? undefined).toBeUndefined();
      done++;
    };
    if (!sendSmallFrameDirect(server, payload, cb)) server.send(payload, { binary: true }, cb);
  };
  expect(sendSmallFrameDirect(server, bytes(0, 0), () => done++)).toBe(true);
  sent.push(bytes(0, 0));
  for (let i = 0; i < 50; i++) {
    send(bytes(1 + (i % 5), i));
    if (i % 7 === 0) send(bytes(SMALL_FRAME_MAX_BYTES, i));
    if (i % 11 === 0) send(bytes(70_000, i)); // a 64-bit length, through ws
  }
  await waitFor(() => received.length === sent.length && done === sent.length, { message: "every message and its callback" });
  expect(received.map((b) => b.toString("hex"))).toEqual(sent.map((b) => b.toString("hex")));
});

it("a frame sent while the socket still has bytes queued or corked goes out after them, not past them", async () => {
  const { server, client, received } = await connected(false);
  const tcp = (server as unknown as { _socket: { writableLength: number } })._socket;
  // The client stops reading, so what the server sends piles up in the kernel and then in node:net.
  (client as unknown as { _socket: { pause(): void } })._socket.pause();
  const sent: Buffer[] = [];
  let i = 0;
  while (tcp.writableLength === 0) {
    const big = bytes(256 * 1024, i++);
    sent.push(big);
    server.send(big, { binary: true });
    await new Promise((r) => setImmediate(r));
    if (i > 400) throw new Error("the socket never queued anything");
  }
  let done = 0;
  for (let k = 0; k < 20; k++) {
    const small = bytes(1 + (k % 3), k);
    sent.push(small);
    expect(sendSmallFrameDirect(server, small, () => done++)).toBe(true);
  }
  (client as unknown as { _socket: { resume(): void } })._socket.resume();
  await waitFor(() => received.length === sent.length && done === 20, { message: "every message, in order" });
  expect(received.map((b) => b.toString("hex"))).toEqual(sent.map((b) => b.toString("hex")));
  // Held by a cork while the kernel has room: still behind what the cork holds.
  const corked = tcp as unknown as { cork(): void; uncork(): void };
  corked.cork();
  const before = bytes(300, 7);
  sent.push(before);
  server.send(before, { binary: true });
  const after = bytes(2, 9);
  sent.push(after);
  expect(sendSmallFrameDirect(server, after, () => done++)).toBe(true);
  corked.uncork();
  await waitFor(() => received.length === sent.length && done === 21, { message: "the corked message, then the small one" });
  expect(received.map((b) => b.toString("hex"))).toEqual(sent.map((b) => b.toString("hex")));
});

it("declines payloads over 125 bytes and sockets with permessage-deflate", async () => {
  const plain = await connected(false);
  expect(sendSmallFrameDirect(plain.server, bytes(SMALL_FRAME_MAX_BYTES + 1, 1), () => {})).toBe(false);
  const deflated = await connected(true);
  expect(deflated.server.extensions).toContain("permessage-deflate");
  expect(sendSmallFrameDirect(deflated.server, bytes(3, 1), () => {})).toBe(false);
  expect(sendSmallFrameDirect({ send() {} }, bytes(3, 1), () => {})).toBe(false);
  plain.server.close();
  expect(sendSmallFrameDirect(plain.server, bytes(3, 1), () => {})).toBe(false);
});
