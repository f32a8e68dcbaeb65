/**
 * A small binary message written straight to the TCP socket of a `ws` WebSocket as one
 * ready-made frame: one buffer and one write, instead of ws's Sender building a header, corking
 * the socket and writing header and payload as a two-part writev. A keystroke's echo is such a
 * message, and every microsecond of it counts (docs/design.md § Performance).
 *
 * It reaches into ws's internals (`_socket`, `_sender`, `_extensions`, ws 8), so it only takes
 * the message when all of these hold, and otherwise returns false so that the caller uses
 * `ws.send`:
 * - the socket is open;
 * - no extension was negotiated (no permessage-deflate: its context must see every message);
 * - ws's Sender is idle, with nothing queued and nothing being compressed, so the order of
 *   messages is kept.
 * Anything that does not look like ws 8 (Bun's own `ws`, a test's recording socket) is never
 * taken. ws's `bufferedAmount` counts the socket's queue, so back-pressure sees these bytes too.
 *
 * The frame itself goes to the kernel in one `send(2)` on the socket's descriptor when nothing is
 * queued before it (unqueued-send.ts); what the kernel does not take, and every error, is written
 * through the socket as before.
 */

import { sendUnqueued, type UnqueuedSocket } from "./unqueued-send.ts";

/** Payloads below this fit the one-byte length of a WebSocket frame header (RFC 6455 §5.2). */
export const SMALL_FRAME_MAX_BYTES = 125;
/** FIN and opcode 2 (binary), server frames unmasked. */
const FIN_BINARY = 0x82;
/** WebSocket.OPEN */
const OPEN = 1;

type SocketInternals = UnqueuedSocket & {
  write(data: Uint8Array, done: (err?: Error | null) => void): boolean;
  writable?: boolean;
};

type WsInternals = {
  readyState?: number;
  _socket?: SocketInternals | null;
  _sender?: { _queue?: unknown[]; _state?: number } | null;
  _extensions?: Record<string, unknown> | null;
};

/** Write `payload` as one binary frame and return true, or return false (nothing written): use `ws.send`. */
export function sendSmallFrameDirect(ws: unknown, payload: Uint8Array, done: (err?: Error) => void): boolean {
  if (payload.length > SMALL_FRAME_MAX_BYTES) return false;
  const w = ws as WsInternals;
  const socket = w._socket;
  const sender = w._sender;
  if (w.readyState !== OPEN || !socket || socket.writable === false || typeof socket.write !== "function") return false;
  if (!sender || !Array.isArray(sender._queue) || sender._queue.length > 0 || sender._state !== 0) return false;
  if (!w._extensions || Object.keys(w._extensions).length > 0) return false;
  const frame = Buffer.allocUnsafe(payload.length + 2);
  frame[0] = FIN_BINARY;
  frame[1] = payload.length;
  frame.set(payload, 2);
  if (!sendNow(socket, frame, done)) socket.write(frame, (err) => done(err ?? undefined));
  return true;
}

/**
 * Send the frame with one `send(2)` when the plain TCP socket has nothing queued; `done` runs in a
 * microtask, as late as node:net would call it. False when it does not apply or the kernel took
 * nothing (the caller writes the frame as usual); a short send writes the rest through the socket.
 */
function sendNow(socket: SocketInternals, frame: Uint8Array, done: (err?: Error) => void): boolean {
  const sent = sendUnqueued(socket, frame);
  if (sent === 0) return false;
  if (sent < frame.length) socket.write(frame.subarray(sent), (err) => done(err ?? undefined));
  else queueMicrotask(done);
  return true;
}
