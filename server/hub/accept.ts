import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocket, WebSocketServer } from "ws";
import { CloseCode, COMPRESSION_THRESHOLD_BYTES, MAX_CLIENT_FRAME_BYTES } from "../contract/protocol.ts";
import { ErrorCode } from "../contract/types.ts";
import { refuseUpgrade } from "../http/app.ts";
import type { Principal } from "../http/credentials.ts";
import { ConnectionLimiter, connectionAddress, DEFAULT_CONNECTION_LIMITS, type ConnectionLimits } from "./connection-limit.ts";
import { closeSocket } from "./close-socket.ts";
import { installFastReceive } from "./fast-receive.ts";

/** Policy violation: the socket's credential was revoked or expired, or its principal shut out. */
const CLOSE_CREDENTIAL = CloseCode.POLICY;
/** Longest delay a Node timer takes (about 24.8 days); a later expiry is checked again then. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** What the acceptor asks about the principal of each open socket (docs/protocol.md, Close codes). */
export type CredentialCheck = {
  /** Why the principal's sockets must close now (the 1008 reason), or null while it may go on. */
  closeReason(principal: Principal): string | null;
  /** How long until the principal's credential runs out (ms), or null when it never does. */
  msUntilExpiry(principal: Principal): number | null;
};

type SendOptions = { mask?: boolean; binary?: boolean; compress?: boolean; fin?: boolean };
type SendCallback = (err?: Error) => void;

/**
 * A socket whose client frames reach endpoint code only while its credential holds: each frame is
 * checked first, so a credential that ran out between two checks is caught at the next frame.
 */
class CheckedWebSocket extends WebSocket {
  credentialRefusal: (() => string | null) | null = null;

  override emit(event: string | symbol, ...args: unknown[]): boolean {
    if (event === "message" && this.credentialRefusal) {
      const reason = this.credentialRefusal();
      if (reason !== null) {
        this.close(CLOSE_CREDENTIAL, reason);
        return false;
      }
    }
    return super.emit(event, ...args);
  }
}

/**
 * ws applies perMessageDeflate's `threshold` only without context takeover; docs/protocol.md § Compression
 * leaves every message under 128 bytes uncompressed, so each send says so unless the caller decided itself.
 */
class ThresholdWebSocket extends CheckedWebSocket {
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

/**
 * zlib level of permessage-deflate: the fastest. Terminal output is repetitive enough that level 1
 * still shrinks it about fourfold, at a fraction of the CPU of the default level 6 (docs/design.md
 * § Performance, deflate throughput), and compression is there for slow links, not to save the last bytes.
 */
export const DEFLATE_LEVEL = 1;

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
  private readonly sockets = new Map<CheckedWebSocket, Principal>();
  /** sockets another process serves (the session host): their principals and how to close them */
  private readonly external = new Map<object, { principal: Principal; close: (code: number, reason: string) => void }>();
  private credentials: CredentialCheck | null = null;
  readonly limiter: ConnectionLimiter;

  constructor(maxPayload = MAX_CLIENT_FRAME_BYTES, limits: ConnectionLimits = DEFAULT_CONNECTION_LIMITS) {
    this.limiter = new ConnectionLimiter(limits);
    this.plain = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload, clientTracking: false, WebSocket: CheckedWebSocket });
    this.deflate = new WebSocketServer({
      noServer: true,
      maxPayload,
      clientTracking: false,
      WebSocket: ThresholdWebSocket,
      perMessageDeflate: {
        // Context takeover on both sides (the default): terminal output compresses far better with history.
        threshold: COMPRESSION_THRESHOLD_BYTES,
        zlibDeflateOptions: { level: DEFLATE_LEVEL },
        // Compression runs on libuv's pool: a few at once keeps memory bounded under fan-out.
        concurrencyLimit: 10,
      },
    });
  }

  /**
   * Watch every open socket's principal from now on: a socket whose principal may no longer act
   * is closed with 1008 when `recheckCredentials` is called, when its credential expires, and at
   * its next client frame.
   */
  watchCredentials(check: CredentialCheck): void {
    this.credentials = check;
  }

  /** Close every socket whose principal may no longer act (a token revoked, the Agent API switched off). */
  recheckCredentials(): void {
    if (!this.credentials) return;
    for (const [ws, principal] of this.sockets) {
      const reason = this.credentials.closeReason(principal);
      if (reason !== null) ws.close(CLOSE_CREDENTIAL, reason);
    }
    for (const { principal, close } of this.external.values()) {
      const reason = this.credentials.closeReason(principal);
      if (reason !== null) close(CLOSE_CREDENTIAL, reason);
    }
  }

  /** When the principal's credential runs out (ms since the epoch), or null when it never does (or nothing is watched). */
  expiresAt(principal: Principal): number | null {
    const ms = this.credentials?.msUntilExpiry(principal) ?? null;
    return ms === null ? null : Date.now() + ms;
  }

  /** Why a new socket from `address` must be refused with 429 now, or null. */
  refusal(address: string): string | null {
    return this.limiter.refusal(address);
  }

  /**
   * A WebSocket another process serves (the session host, docs/design.md § The session host serves
   * the streams): it counts against the connection limits, and `close` ends it when its principal
   * may no longer act, like a socket of this process. Returns what to call once it has closed.
   * Server shutdown leaves it alone: it outlives this process.
   */
  trackExternal(address: string, principal: Principal, close: (code: number, reason: string) => void): () => void {
    const key = {};
    const release = this.limiter.take(address);
    this.external.set(key, { principal, close });
    const reason = this.credentials?.closeReason(principal) ?? null;
    if (reason !== null) close(CLOSE_CREDENTIAL, reason);
    const stopExpiryTimer = this.watchPrincipal(principal, () => this.credentialRefusal(principal), (r) => close(CLOSE_CREDENTIAL, r));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.external.delete(key);
      stopExpiryTimer();
      release();
    };
  }

  private credentialRefusal(principal: Principal): string | null {
    return this.credentials?.closeReason(principal) ?? null;
  }

  /** Upgrade the request, or refuse it with 429 past a connection limit; the callback gets an open socket of `principal`. */
  accept(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL, principal: Principal, onSocket: (ws: WebSocket) => void): void {
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
      // A keystroke's frame is decoded off the socket's chunk (fast-receive.ts; ws for anything else).
      installFastReceive(ws);
      const checked = ws as CheckedWebSocket;
      const release = this.limiter.take(address);
      this.sockets.set(checked, principal);
      const stopExpiryTimer = this.watchSocket(checked, principal);
      ws.once("close", () => {
        this.sockets.delete(checked);
        stopExpiryTimer();
        release();
      });
      onSocket(ws);
    });
  }

  /** Check the socket's credential before each client frame, and close it when the credential expires. */
  private watchSocket(ws: CheckedWebSocket, principal: Principal): () => void {
    const check = this.credentials;
    if (!check) return () => {};
    ws.credentialRefusal = () => check.closeReason(principal);
    return this.watchPrincipal(principal, ws.credentialRefusal, (reason) => ws.close(CLOSE_CREDENTIAL, reason));
  }

  /** Close (through `close`) when the principal's credential expires; returns what stops the watch. */
  private watchPrincipal(principal: Principal, refusal: () => string | null, close: (reason: string) => void): () => void {
    const check = this.credentials;
    if (!check) return () => {};
    let timer: ReturnType<typeof setTimeout> | null = null;
    const arm = () => {
      const ms = check.msUntilExpiry(principal);
      if (ms === null) return;
      timer = setTimeout(() => {
        const reason = refusal();
        if (reason !== null) close(reason);
        else arm();
      }, Math.min(ms + 1, MAX_TIMER_MS));
      timer.unref();
    };
    arm();
    return () => {
      if (timer) clearTimeout(timer);
    };
  }

  /** Open sockets across all endpoints (a debug figure: leaks show here). */
  get openSockets(): number {
    return this.sockets.size;
  }

  /** Server shutdown: tell every client (1001 going away) and drop stragglers. */
  closeAll(code = 1001, reason = "server shutting down"): void {
    for (const ws of this.sockets.keys()) closeSocket(ws, code, reason);
  }

  terminateAll(): void {
    for (const ws of this.sockets.keys()) ws.terminate();
  }
}
