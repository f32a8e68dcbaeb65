/**
 * The server's side of "the session host serves the streams" (docs/design.md § The session host
 * serves the streams): an authorised upgrade of `/ws/s/{id}` is handed, TCP descriptor and all, to
 * the host that owns the session's PTY, so a keystroke and its echo never cross a process boundary.
 * The server keeps TLS, HTTP, authentication, the origin check and the connection limits; the host
 * completes the WebSocket handshake and serves the stream. What rides with the descriptor is one
 * JSON message, read by the host with `parseHandedMessage` inside its error boundary.
 */
import { randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { CAPABILITIES, type Capability } from "../contract/types.ts";
import type { Principal } from "../http/credentials.ts";
import { FdChannel, fdPassingSupported, socketFd } from "./fd-channel.ts";
import { readSecret, type HostPaths } from "./host-dir.ts";

/**
 * The request headers the host needs to complete the handshake (RFC 6455 § 4.2.1, permessage-deflate's
 * offer); no cookie or token ever crosses: the server authenticated the request already.
 */
const HANDED_HEADERS = ["host", "upgrade", "connection", "sec-websocket-key", "sec-websocket-version", "sec-websocket-extensions", "sec-websocket-protocol"] as const;
/** A handed message is at most this long (the channel's own bound is 64 KiB). */
export const MAX_HANDED_MESSAGE_BYTES = 60 * 1024;
/** Bytes the client sent past its request that may ride along (a client waits for the 101 before it sends a frame). */
const MAX_HANDED_HEAD_BYTES = 16 * 1024;

/**
 * What a handed principal keeps: enough for the host's lease to bind client IDs, for a next server
 * to check it again, and for the host to close the stream when its credential runs out while no
 * server watches it (`expiresAt`, ms since the epoch, as the server knew it when it handed the stream).
 */
export type HandedPrincipal = { kind: Principal["kind"]; id: string; capabilities: Capability[]; loginCookie?: string; expiresAt?: number };

/** The messages on the stream channel, server to host. */
export type HandedMessage =
  /** the first: the server presents the host's secret, as in its hello */
  | { type: "server"; secret: string }
  /** an upgrade, its descriptor riding along */
  | { type: "stream"; conn: string; session: string; url: string; headers: Record<string, string>; head: string; principal: HandedPrincipal; address: string };

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
const isString = (v: unknown): v is string => typeof v === "string";
const isShortString = (v: unknown): v is string => isString(v) && v.length <= 8 * 1024;

function parsePrincipal(v: unknown): HandedPrincipal | null {
  if (!isRecord(v) || (v.kind !== "global" && v.kind !== "agent") || !isShortString(v.id) || !Array.isArray(v.capabilities)) return null;
  const capabilities = v.capabilities.filter((c): c is Capability => (CAPABILITIES as readonly unknown[]).includes(c));
  if (capabilities.length !== v.capabilities.length) return null;
  if (v.loginCookie !== undefined && !isShortString(v.loginCookie)) return null;
  if (v.expiresAt !== undefined && !(typeof v.expiresAt === "number" && Number.isSafeInteger(v.expiresAt) && v.expiresAt >= 0)) return null;
  return {
    kind: v.kind,
    id: v.id,
    capabilities,
    ...(v.loginCookie !== undefined ? { loginCookie: v.loginCookie } : {}),
    ...(v.expiresAt !== undefined ? { expiresAt: v.expiresAt } : {}),
  };
}

/** A message of the stream channel, or null for anything that is not one. Never throws. */
export function parseHandedMessage(data: Uint8Array): HandedMessage | null {
  if (data.length > MAX_HANDED_MESSAGE_BYTES) return null;
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(data));
  } catch {
    return null;
  }
  if (!isRecord(value)) return null;
  if (value.type === "server") return isShortString(value.secret) ? { type: "server", secret: value.secret } : null;
  if (value.type !== "stream") return null;
  const { conn, session, url, headers, head, address } = value;
  if (!isShortString(conn) || !isShortString(session) || !isShortString(url) || !url.startsWith("/") || !isString(head) || !isShortString(address)) return null;
  if (!isRecord(headers) || !Object.entries(headers).every(([k, h]) => (HANDED_HEADERS as readonly string[]).includes(k) && isShortString(h))) return null;
  const principal = parsePrincipal(value.principal);
  if (!principal) return null;
  return { type: "stream", conn, session, url, headers: headers as Record<string, string>, head, principal, address };
}

export function encodeHandedMessage(message: HandedMessage): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(message));
}

/** A principal as it crosses, with when its credential runs out (null: never); `principalOf` makes it whole again. */
export function handedPrincipal(principal: Principal, expiresAt: number | null = null): HandedPrincipal {
  return {
    kind: principal.kind,
    id: principal.id,
    capabilities: [...principal.capabilities],
    ...(principal.loginCookie !== undefined ? { loginCookie: principal.loginCookie } : {}),
    ...(expiresAt !== null ? { expiresAt: Math.max(0, Math.round(expiresAt)) } : {}),
  };
}

export function principalOf(handed: HandedPrincipal): Principal {
  return { kind: handed.kind, id: handed.id, capabilities: new Set(handed.capabilities), ...(handed.loginCookie !== undefined ? { loginCookie: handed.loginCookie } : {}) };
}

/**
 * Tests and the bench: WEBMUX_HOST_STREAMS=relay keeps every terminal stream in the server, relayed
 * to the host as before, so both designs can be measured side by side (bench/session-host.ts).
 */
export function handoffDisabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.WEBMUX_HOST_STREAMS === "relay";
}

/** The server's end of the stream channel to its host. */
export class StreamHandoff {
  private constructor(private readonly channel: FdChannel) {}

  /**
   * Connect to the host's stream channel and present its secret; null where descriptors cannot
   * be handed (Bun, not Linux, the helper not built) or the host takes none (one from before).
   */
  static open(paths: HostPaths): StreamHandoff | null {
    if (!fdPassingSupported()) return null;
    const secret = readSecret(paths);
    if (!secret) return null;
    let channel: FdChannel;
    try {
      channel = FdChannel.connect(paths.streams);
      channel.send(encodeHandedMessage({ type: "server", secret }));
    } catch {
      return null;
    }
    return new StreamHandoff(channel);
  }

  get open(): boolean {
    return !this.channel.closed;
  }

  /**
   * Hand an authorised upgrade to the host: true when it took the socket (this process's copy is
   * closed then), false when it cannot (the caller serves it). Called inside the `upgrade` handler,
   * so nothing more was read from the socket than `head`.
   */
  hand(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL, principal: Principal, sessionId: string, address: string, expiresAt: number | null = null): string | null {
    if (this.channel.closed || !(socket instanceof Socket)) return null;
    const fd = socketFd(socket);
    if (fd === null) return null;
    const buffered = socket.readableLength > 0 ? (socket.read() as Buffer | null) : null;
    const rest = buffered ? Buffer.concat([head, buffered]) : head;
    if (rest.length > MAX_HANDED_HEAD_BYTES) return null;
    const headers: Record<string, string> = {};
    for (const name of HANDED_HEADERS) {
      const value = req.headers[name];
      if (typeof value === "string") headers[name] = value;
    }
    const conn = randomBytes(9).toString("base64url");
    const message = encodeHandedMessage({ type: "stream", conn, session: sessionId, url: url.pathname + url.search, headers, head: rest.toString("base64"), principal: handedPrincipal(principal, expiresAt), address });
    if (message.length > MAX_HANDED_MESSAGE_BYTES) return null;
    try {
      this.channel.send(message, [fd]);
    } catch {
      if (buffered) socket.unshift(buffered);
      return null;
    }
    socket.destroy(); // this process's copy: the host holds its own
    return conn;
  }

  close(): void {
    this.channel.close();
  }
}
