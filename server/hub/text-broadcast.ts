import type { WebSocket } from "ws";
import { COMPRESSION_THRESHOLD_BYTES, CloseCode } from "../contract/protocol.ts";
import { closeSocket } from "./close-socket.ts";

/**
 * A client this far behind holds several full session lists it has not read; a fresh snapshot
 * after reconnecting serves it better than a queue that keeps growing.
 */
export const MAX_BUFFERED_BYTES = 1024 * 1024;
/** How long a slow client's close frame may sit behind its unread data before the socket is dropped. */
export const SLOW_CLOSE_GRACE_MS = 2_000;

export type TextBroadcastOptions = {
  /** default MAX_BUFFERED_BYTES */
  maxBufferedBytes?: number;
};

/**
 * The sockets of one server-to-client JSON endpoint (/ws/sessions, /ws/settings). A message is
 * encoded once and the same bytes are queued on every socket. A socket still holding more than
 * `maxBufferedBytes` unsent when the next message is due is closed with 4408; what clients send
 * is read and dropped.
 */
export class TextBroadcast {
  private readonly sockets = new Set<WebSocket>();
  private readonly maxBufferedBytes: number;

  constructor(options: TextBroadcastOptions = {}) {
    this.maxBufferedBytes = options.maxBufferedBytes ?? MAX_BUFFERED_BYTES;
  }

  get size(): number {
    return this.sockets.size;
  }

  /** Take an open socket: `first` (its snapshot) goes out at once, whatever its size. */
  add(ws: WebSocket, first: string): void {
    // Messages are not listened to; protocol errors are caught where every socket is accepted.
    ws.once("close", () => this.sockets.delete(ws));
    if (ws.readyState !== ws.OPEN) return;
    this.sockets.add(ws);
    const bytes = Buffer.from(first, "utf8");
    ws.send(bytes, sendOptions(bytes));
  }

  /** Queue one message on every socket; backed-up sockets are closed instead. */
  send(text: string): void {
    if (this.sockets.size === 0) return;
    const bytes = Buffer.from(text, "utf8");
    const options = sendOptions(bytes);
    for (const ws of this.sockets) {
      if (ws.readyState !== ws.OPEN) {
        this.sockets.delete(ws);
        continue;
      }
      if (ws.bufferedAmount > this.maxBufferedBytes) {
        this.dropSlow(ws);
        continue;
      }
      ws.send(bytes, options);
    }
  }

  /** Close every socket (shutdown) and forget them. */
  closeAll(code = 1001, reason = "server shutting down"): void {
    for (const ws of this.sockets) closeSocket(ws, code, reason);
    this.sockets.clear();
  }

  private dropSlow(ws: WebSocket): void {
    this.sockets.delete(ws);
    // The close frame waits behind the unread data; a client that does not read at all is cut off.
    closeSocket(ws, CloseCode.TOO_SLOW, "too slow", SLOW_CLOSE_GRACE_MS);
  }
}

/**
 * A text message, compressed (when the socket negotiated permessage-deflate) only from the
 * threshold of docs/protocol.md § Compression on: ws applies its own `threshold` solely without
 * context takeover, so it is set per message.
 */
function sendOptions(bytes: Buffer): { binary: false; compress: boolean } {
  return { binary: false, compress: bytes.length >= COMPRESSION_THRESHOLD_BYTES };
}
