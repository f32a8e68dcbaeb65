import type { WebSocket } from "ws";
import { CloseCode } from "../contract/protocol.ts";
import type { LeaseConnection } from "../session/controller-lease.ts";
import { closeSocket } from "../hub/close-socket.ts";

/**
 * A chat client with more than this unsent, whose socket took nothing for CHAT_STALL_MS, is cut
 * with 4408: reconnecting with `since` costs less than catching up. (One large snapshot alone may
 * exceed it; a reader that keeps taking bytes is not cut for that.)
 */
export const CHAT_SEND_QUEUE_LIMIT_BYTES = 4 * 1024 * 1024;
/** The terminal's rule too: no progress for this long with a full queue is a stalled reader. */
export const CHAT_STALL_MS = 10_000;
/** Past this much unsent a client is cut whatever its progress: it bounds what one client can pin. */
export const CHAT_SEND_QUEUE_HARD_LIMIT_BYTES = 32 * 1024 * 1024;
/** After a close frame is queued, a peer that never reads it is dropped after this long. */
const CLOSE_GRACE_MS = 30_000;

let nextConnectionId = 1;

/** One WebSocket of `/ws/s/{id}/chat`: JSON text frames out, a bound on what may queue up. */
export class ChatConnection implements LeaseConnection {
  readonly id = nextConnectionId++;
  private closed = false;
  /** when the socket last took queued bytes (or the queue was last empty) */
  private lastProgressAt = Date.now();

  constructor(
    readonly ws: WebSocket,
    readonly clientId: string,
    readonly label: string,
    readonly canControl: boolean,
    private readonly onGone: (conn: ChatConnection) => void,
  ) {
    ws.on("close", () => this.gone());
    ws.on("error", () => this.gone());
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  send(text: string): void {
    if (this.closed) return;
    const queued = this.ws.bufferedAmount;
    if (queued === 0) this.lastProgressAt = Date.now();
    const stalled = queued > CHAT_SEND_QUEUE_LIMIT_BYTES && Date.now() - this.lastProgressAt > CHAT_STALL_MS;
    if (stalled || queued > CHAT_SEND_QUEUE_HARD_LIMIT_BYTES) {
      this.close(CloseCode.TOO_SLOW, "too slow; reconnect with since");
      return;
    }
    this.ws.send(text, (err) => {
      if (!err) this.lastProgressAt = Date.now();
    });
  }

  close(code: number, reason = ""): void {
    if (this.closed) return;
    this.closed = true;
    closeSocket(this.ws, code, reason, CLOSE_GRACE_MS);
    this.onGone(this);
  }

  private gone(): void {
    if (this.closed) return;
    this.closed = true;
    this.onGone(this);
  }
}
