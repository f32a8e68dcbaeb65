import WebSocket from "ws";
import {
  decodeChatServerEvent,
  encodeChatClientMessage,
  type ChatClientMessage,
  type ChatHello,
  type ChatMessage,
  type ChatPermission,
  type ChatServerEvent,
  type ChatStatus,
} from "../contract/chat.ts";
import type { ControllerInfo, HybridEnd, SubmissionState } from "../contract/types.ts";
import { waitFor } from "./wait.ts";
import { watchSocket } from "./socket-watch.ts";

export type ChatClientOptions = { token: string; client?: string; label?: string; since?: number; compress?: boolean };

/**
 * A test client of `/ws/s/{id}/chat` that keeps the chat state the way a browser would: the last
 * snapshot, then upserts, deltas, permissions and status applied in order, and `lastSeq` to
 * reconnect with `since`.
 */
export class ChatClient {
  readonly ws: WebSocket;
  readonly events: ChatServerEvent[] = [];
  readonly messages = new Map<string, ChatMessage>();
  readonly permissions = new Map<string, ChatPermission>();
  hello: ChatHello | null = null;
  status: ChatStatus | null = null;
  controller: ControllerInfo | null = null;
  lastSeq = 0;
  closeCode: number | null = null;
  closeReason = "";
  private readonly opened: Promise<void>;
  private readonly closedPromise: Promise<number>;

  constructor(baseUrl: string, sessionId: string, options: ChatClientOptions) {
    const params = new URLSearchParams();
    if (options.client) params.set("client", options.client);
    if (options.label) params.set("label", options.label);
    if (options.since !== undefined) params.set("since", String(options.since));
    if (options.compress) params.set("compress", "1");
    this.ws = new WebSocket(`${baseUrl.replace(/^http/, "ws")}/ws/s/${sessionId}/chat?${params}`, {
      headers: { authorization: `Bearer ${options.token}` },
      perMessageDeflate: options.compress === true,
    });
    ({ opened: this.opened, closed: this.closedPromise } = watchSocket(this.ws, this));
    this.ws.on("message", (data: Buffer, isBinary) => {
      if (isBinary) throw new Error("the chat protocol is text");
      const event = decodeChatServerEvent(data.toString("utf8"));
      if (event.type === "invalid") throw new Error(`server sent an invalid chat frame: ${event.detail}`);
      this.apply(event);
    });
  }

  static async connect(baseUrl: string, sessionId: string, options: ChatClientOptions): Promise<ChatClient> {
    const client = new ChatClient(baseUrl, sessionId, options);
    await client.opened;
    return client;
  }

  private apply(event: ChatServerEvent): void {
    this.events.push(event);
    if ("seq" in event) this.lastSeq = event.seq;
    switch (event.type) {
      case "hello":
        this.hello = event;
        return;
      case "snapshot":
        this.messages.clear();
        for (const m of event.messages) this.messages.set(m.id, structuredClone(m));
        this.permissions.clear();
        for (const p of event.permissions) this.permissions.set(p.requestId, p);
        this.status = event.status;
        return;
      case "message":
        this.messages.set(event.message.id, structuredClone(event.message));
        return;
      case "delta": {
        const part = this.messages.get(event.messageId)?.parts[event.part];
        if (!part || (part.type !== "text" && part.type !== "thinking")) throw new Error(`delta for a part the client does not have: ${event.messageId}[${event.part}]`);
        part.text += event.text;
        return;
      }
      case "status": {
        const { type: _type, seq: _seq, ...status } = event;
        this.status = status;
        return;
      }
      case "permission.request": {
        const { type: _type, seq: _seq, ...permission } = event;
        this.permissions.set(permission.requestId, permission);
        return;
      }
      case "permission.resolved":
        this.permissions.delete(event.requestId);
        return;
      case "control":
        this.controller = event.controller;
        return;
      default:
        return;
    }
  }

  /** The conversation as (role, text) lines: user and assistant text, tool calls, results and service lines. */
  transcript(): string[] {
    const lines: string[] = [];
    for (const m of this.messages.values()) {
      for (const p of m.parts) {
        if (p.type === "text") lines.push(`${m.role}: ${p.text}`);
        else if (p.type === "tool_call") lines.push(`${m.role}: tool_call ${p.name}`);
        else if (p.type === "tool_result") lines.push(`${m.role}: tool_result${p.isError ? " (error)" : ""} ${p.content}`);
        else if (p.type === "service") lines.push(`${m.role}: [${p.text}]`);
      }
    }
    return lines;
  }

  of<T extends ChatServerEvent["type"]>(type: T): Extract<ChatServerEvent, { type: T }>[] {
    return this.events.filter((e): e is Extract<ChatServerEvent, { type: T }> => e.type === type);
  }

  submissionStates(id: string): SubmissionState[] {
    return this.of("submission")
      .filter((s) => s.id === id)
      .map((s) => s.state);
  }

  sendMessage(message: ChatClientMessage): void {
    this.ws.send(encodeChatClientMessage(message));
  }
  sendRaw(text: string): void {
    this.ws.send(text);
  }
  send(id: string, text: string): void {
    this.sendMessage({ type: "send", id, text });
  }
  respond(requestId: string, decision: "allow" | "deny"): void {
    this.sendMessage({ type: "permission.respond", requestId, decision });
  }
  move(to: HybridEnd, interrupt = false): void {
    this.sendMessage({ type: "move", to, interrupt });
  }

  async until(predicate: (client: ChatClient) => unknown, message = "chat condition", timeout = 15_000): Promise<void> {
    await waitFor(() => predicate(this), { timeout, message });
  }

  closed(): Promise<number> {
    return this.closedPromise;
  }

  close(): Promise<number> {
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.close();
    return this.closedPromise;
  }
}
