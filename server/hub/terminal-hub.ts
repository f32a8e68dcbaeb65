import type { WebSocket } from "ws";
import { CloseCode, isValidSessionId } from "../contract/protocol.ts";
import { ErrorCode } from "../contract/types.ts";
import { refuseUpgrade, type App } from "../http/app.ts";
import { can } from "../http/credentials.ts";
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

/** `/ws/s/{id}`: attaches WebSockets to sessions, one TerminalStream per session with connections. */
export class TerminalHub {
  private readonly streams = new Map<string, TerminalStream>();
  private gate: AttachGate = () => null;

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

  register(app: App): void {
    app.websocket("/ws/s/:id", (req, socket, head, { params, url, auth }) => {
      if (!can(auth.principal, "terminal:read")) {
        refuseUpgrade(socket, 403, ErrorCode.CAPABILITY_DENIED, "this token may not read terminals");
        return;
      }
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
        const query = parseTerminalQuery(url.searchParams);
        const stream = this.streamFor(session.id);
        const clientId = bindClientId(query, session.lease, auth.principal);
        const conn = new TerminalConnection(ws, clientId, query.label, can(auth.principal, "terminal:write"), {
          onDrain: (c) => stream.onDrain(c),
          onGone: (c) => this.leave(session.id, stream, c),
        });
        conn.acksReplays = query.replayAck;
        this.listen(ws, stream, conn);
        stream.attach(conn, { resume: query.resume, history: query.history });
      });
    });
  }

  private listen(ws: WebSocket, stream: TerminalStream, conn: TerminalConnection): void {
    ws.on("message", (data, isBinary) => {
      if (!isBinary) return; // the terminal protocol is binary; text frames are ignored
      const bytes = Array.isArray(data) ? Buffer.concat(data) : data instanceof ArrayBuffer ? new Uint8Array(data) : data;
      try {
        stream.handleFrame(conn, bytes);
      } catch (err) {
        // A bug handling one frame must not take the server or the session down.
        console.error("webmux: terminal frame failed:", err);
        conn.close(CloseCode.INTERNAL, "internal error");
      }
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
