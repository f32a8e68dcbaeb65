/**
 * node:net's `onread` mode for a socket that already exists (docs/design.md § The path of an output byte).
 */
import type { Socket } from "node:net";

/** One read buffer per socket, reused for every read: what libuv asks for per read anyway. */
export const OWN_READ_BUFFER_BYTES = 64 * 1024;

/**
 * A socket's bytes read straight into one buffer of its own and handed on as a copy of exactly the
 * bytes read (with `lend`, as a view of that buffer, valid only until `deliver` returns): node:net's
 * `onread` mode, switched on for a socket someone else created (node-pty's socket on a PTY master,
 * the HTTP server's socket under a WebSocket). The default path allocates 64 KiB for every read,
 * wraps it in an ArrayBuffer the garbage collector must sweep, pushes it through a Readable stream
 * and schedules a read-more tick; an echo pays all of it twice
 * (docs/design.md § The path of an output byte, § The path of a keystroke).
 * Back-pressure is unchanged: net.Socket's pause and resume stop and start the handle in this
 * mode too, and the end and errors of the read side take the same path as before.
 *
 * It reaches into net.Socket's internals (the `kBuffer`, `kBufferCb`, `kBufferGen` symbols its
 * constructor sets from `onread`, and the handle's `useUserBuffer`, Node 18-22); when they are not
 * there it returns false and node-pty's 'data' path stays.
 */
export function readIntoOwnBuffer(socket: Socket, deliver: (chunk: Buffer) => void, lend = false): boolean {
  const symbols = new Map(Object.getOwnPropertySymbols(socket).map((symbol) => [symbol.description, symbol]));
  const buffer = symbols.get("kBuffer");
  const callback = symbols.get("kBufferCb");
  const generator = symbols.get("kBufferGen");
  const handle = (socket as unknown as { _handle?: { useUserBuffer?: (buf: Uint8Array) => void } | null })._handle;
  if (!buffer || !callback || !generator || typeof handle?.useUserBuffer !== "function") return false;
  const fields = socket as unknown as Record<symbol, unknown>;
  if (fields[buffer] !== null || fields[callback] !== null) return false; // already in this mode, or not a net.Socket as we know it
  const readBuffer = Buffer.allocUnsafe(OWN_READ_BUFFER_BYTES);
  fields[buffer] = readBuffer;
  fields[generator] = null;
  fields[callback] = (length: number) => {
    deliver(lend ? readBuffer.subarray(0, length) : Buffer.from(readBuffer.subarray(0, length)));
    return true;
  };
  handle.useUserBuffer(readBuffer);
  return true;
}
