/**
 * HostSocket over a real Unix socket: small frames leave at once, large ones and the rest of a
 * turn leave corked; whatever the mix, the peer reads every frame intact and in order.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { waitFor } from "../testing/wait.ts";
import { HostSocket, SINGLE_WRITE_MAX_BYTES } from "./host-socket.ts";
import { encodeOutputFrameParts, type HostMessage } from "./protocol.ts";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

async function pair(options: { lendOutput?: boolean } = {}): Promise<[HostSocket, HostSocket]> {
  const dir = mkdtempSync(join(tmpdir(), "webmux-hostsock-"));
  const path = join(dir, "s.sock");
  const accepted = new Promise<Socket>((resolve) => {
    const server = createServer(resolve);
    server.listen(path);
    cleanups.push(() => {
      server.close();
      rmSync(dir, { recursive: true, force: true });
    });
  });
  const client = connect(path);
  await new Promise((r) => client.once("connect", r));
  const a = new HostSocket(client);
  const b = new HostSocket(await accepted, undefined, options);
  a.trust();
  b.trust();
  cleanups.push(() => {
    a.destroy();
    b.destroy();
  });
  return [a, b];
}

const bytes = (n: number, seed: number) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff);

it("sends small and large frames, alone or many in a turn, intact and in order", async () => {
  const [a, b] = await pair();
  const got: HostMessage[] = [];
  b.events.on("message", (m) => got.push(m));
  const sent: HostMessage[] = [];
  const send = (m: HostMessage) => {
    sent.push(m);
    a.send(m);
  };
  // one small frame in its own turn (written at once), then a turn of mixed frames
  send({ type: "input", ref: 1, flags: 1, data: bytes(1, 1) });
  await new Promise((r) => setImmediate(r));
  send({ type: "output", ref: 2, marks: [], data: bytes(SINGLE_WRITE_MAX_BYTES, 2) });
  send({ type: "input", ref: 3, flags: 0, data: bytes(3, 3) });
  send({ type: "request", id: 4, method: "m", params: { x: 1 }, data: bytes(0, 0) });
  send({ type: "output", ref: 5, marks: [{ at: 1, on: true }], data: bytes(2, 5) });
  await new Promise((r) => setImmediate(r));
  // a large frame first in its turn (corked, not copied), then a small one behind it
  send({ type: "output", ref: 6, marks: [], data: bytes(256 * 1024, 6) });
  send({ type: "output", ref: 7, marks: [], data: bytes(10, 7) });
  await waitFor(() => got.length === sent.length, { message: "every frame arrived" });
  const plain = (m: HostMessage) => ("data" in m ? { ...m, data: [...m.data] } : m);
  expect(got.map(plain)).toEqual(sent.map(plain));
});

it("with lendOutput, OUTPUT is lent for the listeners' turn and every other message is theirs to keep", async () => {
  const [a, b] = await pair({ lendOutput: true });
  const outputs: number[][] = [];
  const kept: HostMessage[] = [];
  b.events.on("message", (m) => {
    // an OUTPUT's bytes are copied while lent, the way the server's mirror copies them into its ring
    if (m.type === "output") outputs.push([...m.data]);
    else kept.push(m);
  });
  const sentOutputs: number[][] = [];
  const sentOthers: HostMessage[] = [];
  for (let i = 0; i < 40; i++) {
    // large batches (several reads each, joined in the reader's one buffer) between small frames
    const data = bytes(i % 3 === 0 ? 200_000 + i : 50 + i, i);
    a.send({ type: "output", ref: i, marks: [], data });
    sentOutputs.push([...data]);
    const other: HostMessage =
      i % 2 === 0 ? { type: "reply", id: i, ok: true, result: { i }, data: bytes(70_000 + i, i + 1) } : { type: "event", name: "e", body: i, data: bytes(30 + i, i + 2) };
    a.send(other);
    sentOthers.push(other);
    if (i % 5 === 0) await new Promise((r) => setImmediate(r));
  }
  await waitFor(() => outputs.length === 40 && kept.length === 40, { message: "every frame arrived" });
  expect(outputs).toEqual(sentOutputs);
  // kept after later reads reused the socket's buffer and the reader's: still intact
  const plain = (m: HostMessage) => ("data" in m ? { ...m, data: [...m.data] } : m);
  expect(kept.map(plain)).toEqual(sentOthers.map(plain));
});

it("a transient frame's memory may be written over once it is sent: the peer reads what it held, sent at once or queued", async () => {
  const [a, b] = await pair({ lendOutput: true });
  const got: Buffer[] = [];
  b.events.on("message", (m) => {
    if (m.type === "output") got.push(Buffer.from(m.data));
  });
  // The peer reads nothing at first, so the kernel's buffer fills and later frames must wait in the queue.
  b.socket.pause();
  const store = new Uint8Array(300_000);
  const sent: Buffer[] = [];
  let queued = false;
  for (let i = 0; i < 30; i++) {
    const length = i % 4 === 3 ? 20 + i : 150_000 + i; // now and then a small frame, joined into one write
    store.fill(i, 0, length);
    store[0] = 0x80 + i; // each frame's bytes its own
    // two views of the one store, like a batch of reads in a ring
    const parts = encodeOutputFrameParts(i, [store.subarray(0, length >> 1), store.subarray(length >> 1, length)]);
    sent.push(Buffer.from(store.subarray(0, length)));
    if (i % 5 === 1) a.send({ type: "event", name: "before", body: i, data: bytes(3, i) }); // corked before it in its turn
    a.sendTransient(parts);
    queued ||= a.queuedBytes > 0;
    store.fill(0xee); // written over at once, as the ring's next reads would
    if (i % 7 === 0) await new Promise((r) => setImmediate(r));
  }
  expect(queued).toBe(true);
  b.socket.resume();
  await waitFor(() => got.length === sent.length, { message: "every frame arrived" });
  // compared as hex digests of each frame: a mismatch names the frame without printing megabytes
  const digest = (frames: Buffer[]) => frames.map((f, k) => `${k}:${f.length}:${createHash("sha1").update(f).digest("hex")}`);
  expect(digest(got)).toEqual(digest(sent));
});
