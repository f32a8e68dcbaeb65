/**
 * A client's small binary frames decoded straight off the socket's chunk, without ws's Receiver
 * (docs/design.md § The path of a keystroke). A keystroke arrives as one masked binary
 * frame of a few bytes in one TCP segment; ws's Receiver is a Writable stream that buffers,
 * consumes and concatenates each chunk through its state machine, which costs a keystroke
 * several microseconds. Here a chunk is walked frame by frame while every frame is one this
 * path can take whole; the first one it cannot (text, control, fragmented, compressed,
 * oversized, unmasked, partial, anything malformed) and everything after it go to ws's own
 * `write`, which then decides exactly as it always did, close codes included. Nothing is ever
 * decided here that ws would decide otherwise: a frame taken here is one ws would have taken
 * and emitted as the same `message`.
 *
 * It reaches into ws 8's Receiver (`_state`, `_bufferedBytes`, `_fragmented`, …), so it only
 * takes a chunk while the Receiver is between frames, holds no bytes and has no message in
 * flight; otherwise, or when the socket does not look like ws 8 (Bun's own `ws`), ws does all.
 */

import type { EventEmitter } from "node:events";
import { Socket } from "node:net";
import { readIntoOwnBuffer } from "../pty/own-read-buffer.ts";

/** Frames up to this payload carry their length in the header's first length byte (RFC 6455 §5.2). */
const SHORT_PAYLOAD_MAX = 125;
/** Header of a short masked frame: two bytes, then the four-byte mask. */
const SHORT_MASKED_HEADER_BYTES = 6;
/** FIN set, RSV1-3 clear, opcode 2 (binary): a whole, uncompressed binary message. */
const FIN_BINARY = 0x82;
/** ws's Receiver state between frames (GET_INFO). */
const RECEIVER_BETWEEN_FRAMES = 0;
/** WebSocket.OPEN */
const OPEN = 1;

type ReceiverInternals = {
  write(chunk: Buffer): boolean;
  emit(event: string, ...args: unknown[]): boolean;
  _state?: number;
  _bufferedBytes?: number;
  _fragmented?: number;
  _loop?: boolean;
  _errored?: boolean;
  _opcode?: number;
  _binaryType?: string;
  _allowSynchronousEvents?: boolean;
  _maxPayload?: number;
  writableLength?: number;
  writableEnded?: boolean;
  writableCorked?: number;
};

type WebSocketInternals = { readyState?: number; _receiver?: ReceiverInternals | null; _socket?: unknown };

/** Whether ws's Receiver is between frames with nothing of its own pending, so the next frame may be taken here. */
function receiverIdle(ws: WebSocketInternals, r: ReceiverInternals): boolean {
  return (
    ws.readyState === OPEN &&
    r._state === RECEIVER_BETWEEN_FRAMES &&
    r._bufferedBytes === 0 &&
    r._fragmented === 0 &&
    r._loop === false &&
    r._errored === false &&
    r._opcode !== 0x08 &&
    r._binaryType === "nodebuffer" &&
    r._allowSynchronousEvents === true &&
    r.writableLength === 0 &&
    r.writableEnded === false &&
    r.writableCorked === 0
  );
}

/**
 * Route the socket's chunks through the fast path from now on. Returns false (nothing changed)
 * when the socket is not ws 8's.
 */
export function installFastReceive(socket: unknown): boolean {
  const ws = socket as WebSocketInternals & EventEmitter;
  const receiver = ws._receiver;
  if (!receiver || typeof receiver.write !== "function" || typeof receiver.emit !== "function") return false;
  if (typeof receiver._state !== "number" || typeof receiver._bufferedBytes !== "number" || typeof receiver._maxPayload !== "number") return false;
  // ws's own listener (receiverOnMessage) only passes a message on to the WebSocket's `message`.
  const toWebSocket = (receiver as unknown as EventEmitter).listenerCount("message") === 1 && typeof ws.emit === "function";
  const write = receiver.write.bind(receiver);
  const fastWrite = (chunk: Buffer): boolean => {
    if (!Buffer.isBuffer(chunk)) return write(chunk);
    let at = 0;
    while (at < chunk.length && receiverIdle(ws, receiver)) {
      const length = takenFrameLength(chunk, at, receiver._maxPayload!);
      if (length === 0) break;
      const start = at + SHORT_MASKED_HEADER_BYTES;
      const data = chunk.subarray(start, start + length);
      // Unmasked in place, as ws does: the chunk is this socket's alone.
      for (let i = 0; i < length; i++) data[i]! ^= chunk[at + 2 + (i & 3)]!;
      at = start + length;
      if (toWebSocket) ws.emit("message", data, true);
      else receiver.emit("message", data, true);
    }
    if (at === 0) return write(chunk);
    if (at === chunk.length) return true;
    return write(chunk.subarray(at));
  };
  receiver.write = fastWrite;
  readSocketIntoOwnBuffer(ws._socket, fastWrite);
  return true;
}

/**
 * The TCP socket under the WebSocket reads into a buffer of its own (own-read-buffer.ts). Each
 * read's copy goes to the Receiver's fast path as ws's `data` listener would have written it there
 * (pausing the socket when the Receiver pushes back), without the hops of the socket's event and
 * ws's listener; once ws has taken its listener away, after a close frame or an error, the copy
 * goes to whatever listens then (nothing: it reads on to the end and drops what comes). What
 * arrived before (the upgrade's `head`, which ws puts back into the stream) still flows from the
 * stream's own buffer first, through ws's listener. A TLS socket is left as it is.
 */
function readSocketIntoOwnBuffer(socket: unknown, write: (chunk: Buffer) => boolean): void {
  if (!(socket instanceof Socket) || (socket as { encrypted?: boolean }).encrypted) return;
  const events = socket as unknown as { _events?: Record<string, unknown> };
  const wsListener = socket.listenerCount("data") === 1 ? socket.listeners("data")[0] : undefined;
  readIntoOwnBuffer(socket, (chunk) => {
    if (wsListener !== undefined && events._events?.data === wsListener) {
      if (!write(chunk)) socket.pause();
    } else socket.emit("data", chunk);
  });
}

/**
 * The payload length of the frame at `at` when it is one this path takes whole — a complete,
 * final, masked, uncompressed binary frame of at most 125 bytes within `maxPayload` — else 0
 * (also for an empty payload, which ws turns into its own shared empty buffer).
 */
function takenFrameLength(chunk: Buffer, at: number, maxPayload: number): number {
  if (chunk.length - at < SHORT_MASKED_HEADER_BYTES) return 0;
  if (chunk[at] !== FIN_BINARY) return 0;
  const second = chunk[at + 1]!;
  if ((second & 0x80) === 0) return 0; // unmasked: ws closes with 1002
  const length = second & 0x7f;
  if (length === 0 || length > SHORT_PAYLOAD_MAX) return 0;
  if (maxPayload > 0 && length > maxPayload) return 0;
  if (chunk.length - at - SHORT_MASKED_HEADER_BYTES < length) return 0;
  return length;
}
