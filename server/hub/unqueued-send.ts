/**
 * One `send(2)` on a socket's descriptor, around node:net's write path, for bytes that nothing
 * waits before: node:net's stream, a cork and libuv's write queue are all empty, and the socket is
 * not TLS. node:net's write (its stream state, the write request, the after-write tick) costs
 * microseconds more than the system call, and it keeps a reference to the bytes until the kernel
 * has them, so memory that changes afterwards must be copied first (docs/design.md § Performance).
 * What the kernel does not take, and every error, is the caller's to write through the socket, so
 * order, back-pressure and the socket's error and close take node:net's path.
 */
import { sendSome } from "webmux-fd-flags";

export type UnqueuedSocket = {
  writableLength?: number;
  writableCorked?: number;
  encrypted?: boolean;
  _handle?: { fd?: number; writeQueueSize?: number } | null;
};

/** How many leading bytes of `bytes` the kernel took: 0 when sending around the queue does not apply, or on any error. */
export function sendUnqueued(socket: UnqueuedSocket, bytes: Uint8Array): number {
  const handle = socket._handle;
  if (socket.encrypted || !handle || typeof handle.fd !== "number" || handle.fd < 0) return 0;
  if (socket.writableLength !== 0 || socket.writableCorked !== 0 || handle.writeQueueSize !== 0) return 0;
  return Math.max(0, sendSome(handle.fd, bytes));
}
