import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import { COMPRESSION_THRESHOLD_BYTES, MAX_CLIENT_FRAME_BYTES } from "../contract/protocol.ts";

/**
 * Completes WebSocket upgrades for every endpoint. permessage-deflate is negotiated only when the
 * URL says `compress=1` (browsers always offer it and scripts cannot withdraw the offer, so the
 * parameter carries the intent) and the client offered it; never otherwise.
 */
export class WebSocketAcceptor {
  private readonly plain: WebSocketServer;
  private readonly deflate: WebSocketServer;
  private readonly sockets = new Set<WebSocket>();

  constructor(maxPayload = MAX_CLIENT_FRAME_BYTES) {
    this.plain = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload, clientTracking: false });
    this.deflate = new WebSocketServer({
      noServer: true,
      maxPayload,
      clientTracking: false,
      perMessageDeflate: {
        // Context takeover on both sides (the default): terminal output compresses far better with history.
        threshold: COMPRESSION_THRESHOLD_BYTES,
        // Compression runs on libuv's pool: a few at once keeps memory bounded under fan-out.
        concurrencyLimit: 10,
      },
    });
  }

  /** Upgrade the request; the callback gets an open socket. */
  accept(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL, onSocket: (ws: WebSocket) => void): void {
    const server = url.searchParams.get("compress") === "1" ? this.deflate : this.plain;
    server.handleUpgrade(req, socket, head, (ws) => {
      this.sockets.add(ws);
      ws.once("close", () => this.sockets.delete(ws));
      onSocket(ws);
    });
  }

  /** Open sockets across all endpoints (a debug figure: leaks show here). */
  get openSockets(): number {
    return this.sockets.size;
  }

  /** Server shutdown: tell every client (1001 going away) and drop stragglers. */
  closeAll(code = 1001, reason = "server shutting down"): void {
    for (const ws of this.sockets) {
      try {
        ws.close(code, reason);
      } catch {
        ws.terminate();
      }
    }
  }

  terminateAll(): void {
    for (const ws of this.sockets) ws.terminate();
  }
}
