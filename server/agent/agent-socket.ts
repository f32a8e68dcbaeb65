/**
 * WS /ws/agent: `run` frames (results matched by `id`), `subscribe`, `ping`/`pong`, and an
 * event pushed for every session. It needs terminal:read and terminal:write, checked at the
 * handshake; the acceptor checks the token again for every frame (a token revoked or expired
 * closes the socket), and switching the API off closes every connection.
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { RawData, WebSocket } from "ws";
import { CloseCode } from "../contract/protocol.ts";
import { ErrorCode, type AgentEvent, type AgentRequestId, type AgentServerFrame } from "../contract/types.ts";
import { refuseUpgrade, type App } from "../http/app.ts";
import { can, type Principal } from "../http/credentials.ts";
import { ApiError, toApiError } from "../http/errors.ts";
import type { WebSocketAcceptor } from "../hub/accept.ts";
import type { AgentApi } from "./agent-api.ts";
import { AGENT_API_DISABLED } from "./principal-gate.ts";
import { parseRunRequest } from "./run-request.ts";

/** Bytes queued on a connection beyond which it is closed: a client that does not read its events must not grow the server. */
export const MAX_AGENT_SOCKET_BUFFERED_BYTES = 8 * 1024 * 1024;
/** Longest request id echoed back. */
export const MAX_REQUEST_ID_CHARS = 256;

/** Policy violation: the API was switched off while connected. */
const CLOSE_POLICY = CloseCode.POLICY;
/** The client cannot keep up (as on the terminal stream). */
const CLOSE_TOO_SLOW = 4408;

type RequestId = AgentRequestId | undefined;

function requestIdOf(frame: Record<string, unknown>): RequestId {
  const id = frame.id;
  if (typeof id === "string" && id.length <= MAX_REQUEST_ID_CHARS) return id;
  if (typeof id === "number" && Number.isFinite(id)) return id;
  return undefined;
}

export function registerAgentSocket(app: App, api: AgentApi, acceptor: WebSocketAcceptor): { closeAll(): void } {
  const connections = new Set<AgentConnection>();
  const offSettings = api.settings.events.on("changed", (settings) => {
    if (!settings.open_api.enabled) for (const c of connections) c.close(CLOSE_POLICY, AGENT_API_DISABLED);
  });

  app.websocket("/ws/agent", (req: IncomingMessage, socket: Duplex, head: Buffer, { url, auth }) => {
    if (!api.enabled) return refuseUpgrade(socket, 403, ErrorCode.CAPABILITY_DENIED, "the Agent API is disabled");
    if (!can(auth.principal, "terminal:read") || !can(auth.principal, "terminal:write")) {
      return refuseUpgrade(socket, 403, ErrorCode.CAPABILITY_DENIED, "/ws/agent needs terminal:read and terminal:write");
    }
    acceptor.accept(req, socket, head, url, auth.principal, (ws) => {
      const connection = new AgentConnection(ws, auth.principal, api);
      connections.add(connection);
      ws.once("close", () => {
        connections.delete(connection);
        connection.dispose();
      });
    });
  });

  return {
    closeAll() {
      offSettings();
      for (const c of connections) c.close(1001, "server shutting down");
    },
  };
}

class AgentConnection {
  /** Aborted when the socket closes: its runs stop waiting and give their slots back. */
  private readonly gone = new AbortController();
  private readonly offEvents: () => void;

  constructor(
    private readonly ws: WebSocket,
    readonly principal: Principal,
    private readonly api: AgentApi,
  ) {
    this.offEvents = api.events.on("event", (event) => this.push(event));
    ws.on("message", (data, isBinary) => this.receive(data, isBinary));
  }

  close(code: number, reason: string): void {
    this.ws.close(code, reason);
  }

  dispose(): void {
    this.offEvents();
    this.gone.abort();
  }

  private push(event: AgentEvent): void {
    // The acceptor closes the socket of a token that ran out; until its timer does, it hears nothing.
    if (this.api.enabled && this.api.tokens.isLive(this.principal)) this.send({ type: "event", event });
  }

  private send(frame: AgentServerFrame): void {
    if (this.ws.readyState !== this.ws.OPEN) return;
    if (this.ws.bufferedAmount > MAX_AGENT_SOCKET_BUFFERED_BYTES) {
      this.close(CLOSE_TOO_SLOW, "client too slow");
      return;
    }
    this.ws.send(JSON.stringify(frame));
  }

  private sendError(id: RequestId, err: unknown): void {
    const { code, message } = toApiError(err);
    this.send({ type: "error", ...(id !== undefined ? { id } : {}), error: { code, message } });
  }

  private receive(data: RawData, isBinary: boolean): void {
    if (isBinary) return this.sendError(undefined, new ApiError(ErrorCode.INVALID_REQUEST, "frames are JSON text"));
    let frame: unknown;
    try {
      frame = JSON.parse(data.toString());
    } catch {
      return this.sendError(undefined, new ApiError(ErrorCode.INVALID_REQUEST, "frame is not valid JSON"));
    }
    if (typeof frame !== "object" || frame === null || Array.isArray(frame)) {
      return this.sendError(undefined, new ApiError(ErrorCode.INVALID_REQUEST, "frame must be a JSON object"));
    }
    const message = frame as Record<string, unknown>;
    const id = requestIdOf(message);
    // A revoked or expired token's frames never get here: the acceptor checks each one first.
    if (!this.api.enabled) return this.sendError(id, new ApiError(ErrorCode.CAPABILITY_DENIED, "the Agent API is disabled"));
    switch (message.type) {
      case "ping":
        return this.send({ type: "pong", ...(id !== undefined ? { id } : {}) });
      case "subscribe":
        return; // every connection receives every event already
      case "run":
        void this.run(id, message);
        return;
      default:
        return this.sendError(id, new ApiError(ErrorCode.INVALID_REQUEST, `unknown frame type: ${String(message.type)}`));
    }
  }

  private async run(id: RequestId, message: Record<string, unknown>): Promise<void> {
    try {
      const { request, paneId } = parseRunRequest(message);
      const session = this.api.resolvePane(paneId, true);
      const result = await this.api.run(this.principal, session, request, this.gone.signal);
      this.send({ type: "result", ...(id !== undefined ? { id } : {}), ...result });
    } catch (err) {
      this.sendError(id, err);
    }
  }
}
