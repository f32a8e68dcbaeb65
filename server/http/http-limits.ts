/**
 * Time and connection limits of plain HTTP (docs/design.md, Hardening and limits): how long a
 * request may take to arrive, how long an idle connection is kept, how many connections one
 * address and everyone together may hold, and how long a large answer may take to be read.
 * WebSockets have their own limits (hub/connection-limit.ts) once upgraded.
 */
import type { Server } from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { ErrorCode } from "../contract/types.ts";
import { ConnectionLimiter, connectionAddress } from "../hub/connection-limit.ts";
import { answerSocket } from "./errors.ts";

/** A request's headers come in a packet or two: this covers a bad phone link many times over. */
export const HEADERS_TIMEOUT_MS = 10_000;
/** The whole request, its body (at most 1 MiB of JSON) included, even at 50 KB/s. */
export const REQUEST_TIMEOUT_MS = 30_000;
/** An idle kept-alive connection is closed after this; browsers reuse theirs well within it. */
export const KEEP_ALIVE_TIMEOUT_MS = 5_000;
/** How often those timeouts are checked: Node's default (30 s) would keep an idle socket 4× its timeout. */
export const TIMEOUT_CHECK_INTERVAL_MS = 1_000;
/** A TLS handshake takes a few round trips; Node's default (120 s) would let silent ones pile up. */
export const TLS_HANDSHAKE_TIMEOUT_MS = 10_000;
/**
 * Plain HTTP connections one address may hold at once. Every WebSocket begins as one, so a
 * reconnect storm of every tab's, window's and agent's sockets at once must fit (as many as the
 * WebSockets an address may hold); a script opening sockets in a loop stops here.
 */
export const DEFAULT_MAX_HTTP_CONNECTIONS_PER_ADDRESS = 256;
/** Plain HTTP connections in all: with WebSockets, well within a common `ulimit -n` of 4096 and more. */
export const DEFAULT_MAX_HTTP_CONNECTIONS = 1024;
/** Answers from this size on get a deadline: smaller ones fit in the socket's buffers and pin nothing. */
export const LARGE_RESPONSE_BYTES = 64 * 1024;
/** A large answer may take this long plus its size at RESPONSE_MIN_BYTES_PER_S to be read. */
export const RESPONSE_DEADLINE_BASE_MS = 30_000;
/** A slow phone link still reads far faster than this; a client that does not read at all is cut. */
export const RESPONSE_MIN_BYTES_PER_S = 64 * 1024;

export type HttpLimits = {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  timeoutCheckIntervalMs: number;
  maxConnectionsPerAddress: number;
  maxConnections: number;
  responseDeadlineBaseMs: number;
  responseMinBytesPerS: number;
};

export const DEFAULT_HTTP_LIMITS: HttpLimits = {
  headersTimeoutMs: HEADERS_TIMEOUT_MS,
  requestTimeoutMs: REQUEST_TIMEOUT_MS,
  keepAliveTimeoutMs: KEEP_ALIVE_TIMEOUT_MS,
  timeoutCheckIntervalMs: TIMEOUT_CHECK_INTERVAL_MS,
  maxConnectionsPerAddress: DEFAULT_MAX_HTTP_CONNECTIONS_PER_ADDRESS,
  maxConnections: DEFAULT_MAX_HTTP_CONNECTIONS,
  responseDeadlineBaseMs: RESPONSE_DEADLINE_BASE_MS,
  responseMinBytesPerS: RESPONSE_MIN_BYTES_PER_S,
};

/** How long an answer of `bytes` may take to be read before its connection is cut. */
export function responseDeadlineMs(limits: HttpLimits, bytes: number): number {
  return limits.responseDeadlineBaseMs + Math.ceil((bytes / limits.responseMinBytesPerS) * 1000);
}

/**
 * Counts the server's plain HTTP connections per address and in all, and answers one past a
 * limit with 429 before it can send a request. A connection that upgrades to a WebSocket is handed
 * over to the WebSocket limits (`handOver`) and stops counting here.
 */
export class HttpConnectionLimiter {
  private readonly limiter: ConnectionLimiter;
  private readonly releases = new WeakMap<Duplex, () => void>();

  constructor(limits: HttpLimits) {
    this.limiter = new ConnectionLimiter({ perAddress: limits.maxConnectionsPerAddress, total: limits.maxConnections }, "HTTP connections");
  }

  /** Count the connections of `server` (after the TLS handshake when `tls`: the socket requests arrive on). */
  watch(server: Server, tls: boolean): void {
    server.on(tls ? "secureConnection" : "connection", (socket: Socket) => this.admit(socket));
  }

  /** The socket upgraded: its slot is given back (the WebSocket limits count it from now on). */
  handOver(socket: Duplex): void {
    this.releases.get(socket)?.();
    this.releases.delete(socket);
  }

  get total(): number {
    return this.limiter.total;
  }

  private admit(socket: Socket): void {
    const address = connectionAddress(socket.remoteAddress);
    const refusal = this.limiter.refusal(address);
    if (refusal !== null) {
      refuseConnection(socket, refusal);
      return;
    }
    const release = this.limiter.take(address);
    this.releases.set(socket, release);
    socket.once("close", release);
  }
}

/** 429 on a connection before its first request; it closes once the answer is out. */
function refuseConnection(socket: Socket, message: string): void {
  answerSocket(socket, 429, ErrorCode.RATE_LIMITED, message);
  socket.once("finish", () => socket.destroy());
}

/** Apply the request, header and keep-alive timeouts to `server` (Node and Bun both honour them). */
export function applyHttpTimeouts(server: Server, limits: HttpLimits): void {
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = limits.requestTimeoutMs;
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  (server as Server & { connectionsCheckingInterval?: number }).connectionsCheckingInterval = limits.timeoutCheckIntervalMs;
}
