/**
 * The connections of one hybrid session's `/ws/s/{id}/chat`: hello, snapshot or replay on attach,
 * journal events to everyone, submission statuses to the clients they concern, and client frames
 * routed through the session's controller lease (sending takes control, as on the terminal).
 */
import {
  CHAT_PROTOCOL,
  decodeChatClientMessage,
  encodeChatServerEvent,
  type ChatClientMessage,
  type ChatServerEvent,
} from "../contract/chat.ts";
import { CloseCode, MAX_QUERY_IDS, MAX_SUBMISSION_BODY_BYTES } from "../contract/protocol.ts";
import type { LeaseEffect } from "../session/controller-lease.ts";
import type { Session, SessionLink } from "../session/session.ts";
import type { StatusDelivery } from "../session/submission-log.ts";
import type { ChatConnection } from "./chat-connection.ts";
import { HybridBusyError, type HybridSession } from "./hybrid-session.ts";
import { unreachable } from "../contract/unreachable.ts";

/**
 * Frames a client sends before its attach finished (a move or transcript read was under way) are
 * held and handled once it joined, in order; past this many it is a client not waiting for its
 * hello at all, and the rest are dropped.
 */
export const MAX_EARLY_FRAMES = 64;

export class ChatRoom {
  private readonly connections = new Set<ChatConnection>();
  /** each connection's link to the session (docs/design.md § Control) */
  private readonly links = new Map<ChatConnection, SessionLink>();
  /** connections whose attach is under way, with the frames they sent meanwhile */
  private readonly joining = new Map<ChatConnection, string[]>();
  private readonly unsubscribe: (() => void)[] = [];

  constructor(
    private readonly hybrid: HybridSession,
    private readonly session: Session,
  ) {
    this.unsubscribe.push(
      hybrid.journal.subscribe((text) => {
        for (const conn of this.connections) conn.send(text);
      }),
      hybrid.events.on("leaving", (end) => {
        if (end === "chat") this.closeAll(CloseCode.MOVED, "session moved: terminal");
      }),
      hybrid.events.on("reset", () => {
        if (this.connections.size === 0) return;
        const snapshot = hybrid.journal.snapshot();
        for (const conn of this.connections) conn.send(snapshot);
      }),
      hybrid.events.on("deliver", (deliveries) => this.deliver(deliveries)),
    );
  }

  get size(): number {
    return this.connections.size;
  }

  /** Attach after any move or transcript read under way; a session at its terminal end closes it with 4409. */
  async attach(conn: ChatConnection, since: number | null): Promise<void> {
    const early: string[] = [];
    this.joining.set(conn, early);
    const attachable = await this.hybrid.chatAttachable().finally(() => this.joining.delete(conn));
    if (!conn.isOpen) return;
    if (!attachable) {
      conn.close(CloseCode.MOVED, "session moved: terminal");
      return;
    }
    const { journal } = this.hybrid;
    // Deltas gathered so far go out before this client joins: its snapshot or replay includes them.
    journal.flushDeltas();
    this.connections.add(conn);
    const link = this.session.connect(conn);
    this.links.set(conn, link);
    this.sendTo(conn, {
      type: "hello",
      protocol: CHAT_PROTOCOL,
      sessionId: this.session.id,
      agent: this.hybrid.agent,
      conversationId: this.hybrid.conversation,
      end: this.hybrid.currentEnd,
      caps: { ...this.hybrid.caps },
    });
    this.sendTo(conn, { type: "control", controller: this.session.lease.info });
    const replay = since === null ? null : journal.replay(since);
    if (replay) for (const text of replay) conn.send(text);
    else conn.send(journal.snapshot());
    this.applyLease(link.effect, conn);
    this.hybrid.chatClientJoined();
    for (const text of early) this.handleText(conn, text);
  }

  /** Called once per connection when it closed (either side). */
  detach(conn: ChatConnection): void {
    const link = this.links.get(conn);
    if (!this.connections.delete(conn) || !link) return;
    this.links.delete(conn);
    this.applyLease(link.leave(), null);
    this.hybrid.chatClientLeft();
  }

  handleText(conn: ChatConnection, text: string): void {
    const early = this.joining.get(conn);
    if (early) {
      if (early.length < MAX_EARLY_FRAMES) early.push(text);
      return;
    }
    if (!conn.isOpen || !this.connections.has(conn)) return;
    const message = decodeChatClientMessage(text);
    if (message.type === "invalid") {
      // A send whose ID was readable is answered `failed: invalid`; anything else is ignored.
      if (message.id !== undefined && this.claim(conn)) this.hybrid.rejectSend(conn.clientId, message.id);
      return;
    }
    this.dispatch(conn, message);
  }

  private dispatch(conn: ChatConnection, message: ChatClientMessage): void {
    switch (message.type) {
      case "send":
        if (!this.claim(conn)) return;
        if (message.text.trim() === "" || Buffer.byteLength(message.text) > MAX_SUBMISSION_BODY_BYTES) {
          this.hybrid.rejectSend(conn.clientId, message.id);
          return;
        }
        this.hybrid.send(conn.clientId, message.id, message.text);
        return;
      case "query":
        for (const status of this.hybrid.querySends(conn.clientId, message.ids.slice(0, MAX_QUERY_IDS))) this.sendTo(conn, { type: "submission", ...status });
        return;
      case "permission.respond":
        if (!this.claim(conn)) return;
        this.hybrid.respondPermission(message.requestId, message.decision, { clientId: conn.clientId, label: conn.label }, {
          updatedInput: message.updatedInput,
          message: message.message,
        });
        return;
      case "interrupt":
        if (this.claim(conn)) this.hybrid.interrupt();
        return;
      case "move":
        if (!this.claim(conn)) return;
        this.hybrid.move(message.to, message.interrupt === true).catch((err: unknown) => {
          if (err instanceof HybridBusyError) this.sendTo(conn, { type: "error", code: "BUSY", message: err.message });
          else {
            console.error("webmux: hybrid move failed:", err);
            this.sendTo(conn, { type: "error", code: "INTERNAL_ERROR", message: "the move failed" });
          }
        });
        return;
      case "resync":
        this.hybrid.journal.flushDeltas();
        conn.send(this.hybrid.journal.snapshot());
        return;
      default:
        unreachable(message, "chat client message");
    }
  }

  /** Sending, answering, interrupting and moving take control; false for a read-only client. */
  private claim(conn: ChatConnection): boolean {
    const effect = this.links.get(conn)?.claim();
    if (!effect) return false;
    this.applyLease(effect, null);
    return true;
  }

  private applyLease(effect: LeaseEffect, attaching: ChatConnection | null): void {
    if (!effect.broadcast) return;
    for (const conn of this.connections) if (conn !== attaching) this.sendTo(conn, { type: "control", controller: this.session.lease.info });
  }

  private deliver(deliveries: StatusDelivery[]): void {
    for (const { status, clients } of deliveries) {
      for (const conn of this.connections) if (clients.has(conn.clientId)) this.sendTo(conn, { type: "submission", ...status });
    }
  }

  private sendTo(conn: ChatConnection, event: ChatServerEvent): void {
    let text: string;
    try {
      text = encodeChatServerEvent(event);
    } catch (err) {
      console.error("webmux: chat frame encoding failed:", err);
      conn.close(CloseCode.INTERNAL, "cannot encode frame");
      return;
    }
    conn.send(text);
  }

  closeAll(code: number, reason: string): void {
    for (const conn of [...this.connections]) conn.close(code, reason);
  }

  dispose(): void {
    for (const off of this.unsubscribe.splice(0)) off();
  }
}
