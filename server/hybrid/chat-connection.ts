import type { WebSocket } from "ws";
import { CloseCode } from "../contract/protocol.ts";
import type { LeaseConnection } from "../session/controller-lease.ts";

/** A chat client whose unsent bytes pass this is cut with 4408: reconnecting with `since` costs less than catching up. */
export const CHAT_SEND_QUEUE_LIMIT_BYTES = 4 * 1024 * 1024;
/** After a close frame is queued, a peer that never reads it is dropped after this long. */
const CLOSE_GRACE_MS = 30_000;

let nextConnectionId = 1;

/** One WebSocket of `/ws/s/{id}/chat`: JSON text frames out, a bound on what may queue up. */
export class ChatConnection implements LeaseConnection {
  readonly id = nextConnectionId++;
  private closed = false;

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
    if (this.ws.bufferedAmount > CHAT_SEND_QUEUE_LIMIT_BYTES) {
      this.close(CloseCode.TOO_SLOW, "too slow; reconnect with since");
      return;
    }
    this.ws.send(text);
  }

  close(code: number, reason = ""): void {
    if (this.closed) return;
    this.closed = true;
    try {
      this.ws.close(code, reason);
    } catch {
      this.ws.terminate();
    }
    const timer = setTimeout(() => this.ws.terminate(), CLOSE_GRACE_MS);
    timer.unref?.();
    this.ws.once("close", () => clearTimeout(timer));
    this.onGone(this);
  }

  private gone(): void {
    if (this.closed) return;
    this.closed = true;
    this.onGone(this);
  }
}
