/**
 * HostSocket over a real Unix socket: small frames leave at once, large ones and the rest of a
 * turn leave corked; whatever the mix, the peer reads every frame intact and in order.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { waitFor } from "../testing/wait.ts";
import { HostSocket, SINGLE_WRITE_MAX_BYTES } from "./host-socket.ts";
import type { HostMessage } from "./protocol.ts";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

async function pair(): Promise<[HostSocket, HostSocket]> {
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
  const b = new HostSocket(await accepted);
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
