import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocket, WebSocketServer } from "ws";
import { COMPRESSION_THRESHOLD_BYTES, MAX_CLIENT_FRAME_BYTES } from "../contract/protocol.ts";
import { ErrorCode } from "../contract/types.ts";
import { refuseUpgrade } from "../http/app.ts";
import { ConnectionLimiter, connectionAddress, DEFAULT_CONNECTION_LIMITS, type ConnectionLimits } from "./connection-limit.ts";

type SendOptions = { mask?: boolean; binary?: boolean; compress?: boolean; fin?: boolean };
type SendCallback = (err?: Error) => void;

/**
 * ws applies perMessageDeflate's `threshold` only without context takeover; docs/protocol.md § Compression
 * leaves every message under 128 bytes uncompressed, so each send says so unless the caller decided itself.
 */
class ThresholdWebSocket extends WebSocket {
  override send(data: unknown, options?: SendOptions | SendCallback, cb?: SendCallback): void {
    if (typeof options === "function") {
      cb = options;
      options = undefined;
    }
    if (options?.compress === undefined) {
      const size = typeof data === "string" ? Buffer.byteLength(data) : ((data as { byteLength?: number })?.byteLength ?? 0);
      options = { ...options, compress: size >= COMPRESSION_THRESHOLD_BYTES };
    }
    super.send(data as Buffer, options, cb);
  }
}

/** docs/design.md, Hardening and limits: one client's broken frame ends that client's socket only. */
function ignoreProtocolError(): void {}

/**
 * Completes WebSocket upgrades for every endpoint. permessage-deflate is negotiated only when the
 * URL says `compress=1` (browsers always offer it and scripts cannot withdraw the offer, so the
 * parameter carries the intent) and the client offered it; never otherwise. Past the connection
 * limits (per address, in all) a handshake is refused with 429 before it upgrades.
 */
export class WebSocketAcceptor {
  private readonly plain: WebSocketServer;
  private readonly deflate: WebSocketServer;
  private readonly sockets = new Set<WebSocket>();
  readonly limiter: ConnectionLimiter;

  constructor(maxPayload = MAX_CLIENT_FRAME_BYTES, limits: ConnectionLimits = DEFAULT_CONNECTION_LIMITS) {
    this.limiter = new ConnectionLimiter(limits);
    this.plain = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload, clientTracking: false });
    this.deflate = new WebSocketServer({
      noServer: true,
      maxPayload,
      clientTracking: false,
      WebSocket: ThresholdWebSocket,
      perMessageDeflate: {
        // Context takeover on both sides (the default): terminal output compresses far better with history.
        threshold: COMPRESSION_THRESHOLD_BYTES,
        // Compression runs on libuv's pool: a few at once keeps memory bounded under fan-out.
        concurrencyLimit: 10,
      },
    });
  }

  /** Upgrade the request, or refuse it with 429 past a connection limit; the callback gets an open socket. */
  accept(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL, onSocket: (ws: WebSocket) => void): void {
    const address = connectionAddress(req.socket.remoteAddress);
    const refusal = this.limiter.refusal(address);
    if (refusal !== null) {
      refuseUpgrade(socket, 429, ErrorCode.RATE_LIMITED, refusal);
      return;
    }
    const server = url.searchParams.get("compress") === "1" ? this.deflate : this.plain;
    // ws completes an upgrade synchronously (no verifyClient), so the check above and the count
    // below happen in one step: concurrent handshakes cannot slip past the limit together.
    server.handleUpgrade(req, socket, head, (ws) => {
      // Before any endpoint code: a protocol error (oversized, unmasked or bad frame, invalid
      // UTF-8) is emitted as `error`, which throws out of the process without a listener. ws
      // itself then closes the socket with the matching code (1002, 1007, 1009).
      ws.on("error", ignoreProtocolError);
      const release = this.limiter.take(address);
      this.sockets.add(ws);
      ws.once("close", () => {
        this.sockets.delete(ws);
        release();
      });
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
