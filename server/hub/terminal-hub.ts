import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { WebSocket } from "ws";
import { CloseCode, isValidSessionId } from "../contract/protocol.ts";
import { ErrorCode } from "../contract/types.ts";
import { refuseUpgrade, type App } from "../http/app.ts";
import { can, type Principal } from "../http/credentials.ts";
import type { SessionRegistry } from "../session/registry.ts";
import type { WebSocketAcceptor } from "./accept.ts";
import { TerminalConnection } from "./terminal-connection.ts";
import { bindClientId, parseTerminalQuery } from "./terminal-query.ts";
import { TerminalStream } from "./terminal-stream.ts";

/**
 * Why a terminal attach must close at once instead (a hybrid session whose agent is at its chat
 * end closes with 4409), or null to attach.
 */
export type AttachGate = (sessionId: string) => { code: number; reason: string } | null;

/**
 * Serve an authorised upgrade of `/ws/s/{id}` somewhere else (the session host, docs/design.md § The
 * session host serves the streams): true when it took the socket, false to serve it here.
 */
export type TerminalHandoff = (req: IncomingMessage, socket: Duplex, head: Buffer, url: URL, principal: Principal, sessionId: string) => boolean;

/**
 * Attach an open WebSocket of `principal` to a session's stream: its query binds the client ID
 * (docs/protocol.md § Controller rules) and says where to resume. Used here and by the session host.
 */
export function attachTerminalSocket(ws: WebSocket, url: URL, principal: Principal, stream: TerminalStream, onGone: (conn: TerminalConnection) => void): TerminalConnection {
  const query = parseTerminalQuery(url.searchParams);
  const clientId = bindClientId(query, stream.session.lease, principal);
  const conn = new TerminalConnection(ws, clientId, query.label, can(principal, "terminal:write"), {
    onDrain: (c) => stream.onDrain(c),
    onGone,
  });
  conn.acksReplays = query.replayAck;
  ws.on("message", (data, isBinary) => {
    if (!isBinary) return; // the terminal protocol is binary; text frames are ignored
    // A Buffer, ws's binaryType here, is asked first: `isView` is one check, `instanceof` a walk up the prototypes.
    const bytes = ArrayBuffer.isView(data) ? data : Array.isArray(data) ? Buffer.concat(data) : new Uint8Array(data);
    try {
      stream.handleFrame(conn, bytes);
    } catch (err) {
      // A bug handling one frame must not take the server or the session down.
      console.error("webmux: terminal frame failed:", err);
      conn.close(CloseCode.INTERNAL, "internal error");
    }
  });
  stream.attach(conn, { resume: query.resume, history: query.history });
  return conn;
}

/** `/ws/s/{id}`: attaches WebSockets to sessions, one TerminalStream per session with connections. */
export class TerminalHub {
  private readonly streams = new Map<string, TerminalStream>();
  private gate: AttachGate = () => null;
  private handoff: TerminalHandoff | null = null;

  constructor(
    private readonly registry: SessionRegistry,
    private readonly acceptor: WebSocketAcceptor,
  ) {
    registry.events.on("removing", (id) => this.streams.get(id)?.closeAll(CloseCode.NOT_FOUND, "session deleted"));
    registry.events.on("removed", (id) => {
      const stream = this.streams.get(id);
      if (!stream) return;
      stream.closeAll(CloseCode.NOT_FOUND, "session removed");
      stream.dispose();
      this.streams.delete(id);
    });
  }

  /** Let another layer (hybrid sessions) refuse attaches to some sessions. */
  setAttachGate(gate: AttachGate): void {
    this.gate = gate;
  }

  /** Let the session host serve the streams it can (docs/design.md § The session host serves the streams). */
  setHandoff(handoff: TerminalHandoff | null): void {
    this.handoff = handoff;
  }

  /** Whether another layer refuses terminal attaches to this session now (a hybrid session at its chat end). */
  refuses(sessionId: string): boolean {
    return this.gate(sessionId) !== null;
  }

  register(app: App): void {
    app.websocket("/ws/s/:id", (req, socket, head, { params, url, auth }) => {
      if (!can(auth.principal, "terminal:read")) {
        refuseUpgrade(socket, 403, ErrorCode.CAPABILITY_DENIED, "this token may not read terminals");
        return;
      }
      if (this.handoff?.(req, socket, head, url, auth.principal, params.id!)) return;
      this.acceptor.accept(req, socket, head, url, auth.principal, (ws) => {
        const id = params.id!;
        const session = isValidSessionId(id) ? this.registry.get(id) : undefined;
        if (!session) {
          ws.close(CloseCode.NOT_FOUND, "session not found");
          return;
        }
        const refusal = this.gate(session.id);
        if (refusal) {
          ws.close(refusal.code, refusal.reason);
          return;
        }
        const stream = this.streamFor(session.id);
        attachTerminalSocket(ws, url, auth.principal, stream, (c) => this.leave(session.id, stream, c));
      });
    });
  }

  private streamFor(id: string): TerminalStream {
    let stream = this.streams.get(id);
    if (!stream) {
      const session = this.registry.require(id);
      stream = new TerminalStream(session);
      this.streams.set(id, stream);
    }
    return stream;
  }

  private leave(id: string, stream: TerminalStream, conn: TerminalConnection): void {
    stream.detach(conn);
    if (stream.size === 0 && this.streams.get(id) === stream) {
      stream.dispose();
      this.streams.delete(id);
    }
  }

  /** The stream of a session while it has connections. */
  streamOf(id: string): TerminalStream | undefined {
    return this.streams.get(id);
  }

  /** Debug figures for leak tests. */
  stats(): { streams: number; connections: number } {
    let connections = 0;
    for (const s of this.streams.values()) connections += s.size;
    return { streams: this.streams.size, connections };
  }
}
