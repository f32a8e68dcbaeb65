/**
 * The native descriptor helpers' writes: one system call, its count or -errno, never an exception
 * for what the kernel refuses and never a SIGPIPE (the caller takes Node's path with the rest).
 */
import { closeSync, openSync, readSync } from "node:fs";
import { createServer, connect, type Socket } from "node:net";
import { constants } from "node:os";
import { afterEach, expect, it } from "vitest";
import { waitFor } from "../../testing/wait.ts";
import { sendSome, writeSome } from "webmux-fd-flags";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});

type Handle = { _handle?: { fd?: number } };

async function socketPair(): Promise<{ a: Socket; b: Socket; fd: number }> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const accepted = new Promise<Socket>((r) => server.once("connection", r));
  const a = connect((server.address() as { port: number }).port, "127.0.0.1");
  await new Promise((r) => a.once("connect", r));
  const b = await accepted;
  cleanups.push(() => {
    a.destroy();
    b.destroy();
    server.close();
  });
  return { a, b, fd: (a as unknown as Handle)._handle!.fd! };
}

it("sendSome puts the bytes on a TCP socket and says how many", async () => {
  const { b, fd } = await socketPair();
  const got: Buffer[] = [];
  b.on("data", (d: Buffer) => got.push(d));
  expect(sendSome(fd, Buffer.from("hello"))).toBe(5);
  await waitFor(() => Buffer.concat(got).toString() === "hello", { message: "the bytes at the peer" });
});

it("sendSome answers -EAGAIN when the socket is full and -EPIPE after the peer left, without a signal", async () => {
  const { a, b, fd } = await socketPair();
  b.pause();
  const chunk = Buffer.alloc(1 << 20);
  let result = 0;
  for (let i = 0; i < 512 && result >= 0; i++) result = sendSome(fd, chunk);
  expect(result).toBe(-constants.errno.EAGAIN);
  b.destroy();
  await waitFor(
    () => {
      result = sendSome(fd, Buffer.from("x"));
      return result < 0 && result !== -constants.errno.EAGAIN;
    },
    { message: "the send fails once the peer is gone" },
  );
  expect([-constants.errno.EPIPE, -constants.errno.ECONNRESET]).toContain(result);
  expect(a.destroyed).toBe(false); // nothing was raised in the process or on the socket
});

it("writeSome writes to any descriptor; a bad one is -EBADF, a socket call on a file -ENOTSOCK", () => {
  const path = `/tmp/webmux-fd-flags-${process.pid}`;
  const fd = openSync(path, "w+");
  cleanups.push(() => closeSync(fd));
  expect(writeSome(fd, Buffer.from("abc"))).toBe(3);
  const back = Buffer.alloc(3);
  readSync(fd, back, 0, 3, 0);
  expect(back.toString()).toBe("abc");
  expect(sendSome(fd, Buffer.from("abc"))).toBe(-constants.errno.ENOTSOCK);
  expect(writeSome(1 << 20, Buffer.from("abc"))).toBe(-constants.errno.EBADF);
  expect(() => writeSome(-1, Buffer.from("a"))).toThrow(TypeError);
  expect(() => writeSome(fd, "abc" as unknown as Uint8Array)).toThrow(TypeError);
});
