import {
  encodeChatServerEvent,
  type ChatInflight,
  type ChatJournalEvent,
  type ChatMessage,
  type ChatPermission,
  type ChatStatus,
  type PermissionAnswerer,
  type PermissionDecision,
  type TurnStatus,
} from "../contract/chat.ts";

/** Deltas are gathered this long and sent as one event per message part (docs/design.md, Hybrid sessions: ~50 ms). */
export const DELTA_COALESCE_MS = 50;
/** The replay ring keeps at most this many events… */
export const REPLAY_EVENTS = 2_000;
/** …and at most this many bytes of them; a client further behind gets a snapshot. */
export const REPLAY_BYTES = 8 * 1024 * 1024;

type Distribution<T> = T extends unknown ? Omit<T, "seq"> : never;
/** A journal event before it is numbered. */
export type UnnumberedEvent = Distribution<Exclude<ChatJournalEvent, { type: "snapshot" }>>;

/**
 * The chat end's state and its numbered event stream: messages (upserted by id), open permission
 * requests, the status and the running turn. Each change becomes one event with the next `seq`,
 * encoded once and kept in a bounded ring, so a reconnecting client gets exactly the events after
 * its `since` — or a snapshot, which always describes the state as of the last event sent.
 */
export class ChatJournal {
  private seq = 0;
  private readonly ring: { seq: number; text: string }[] = [];
  private ringBytes = 0;
  /** the oldest seq a replay can start after */
  private floor = 0;
  private readonly messages = new Map<string, ChatMessage>();
  private readonly permissions = new Map<string, ChatPermission>();
  private status: ChatStatus = { state: "parked" };
  private inflight: ChatInflight | null = null;
  private readonly pendingDeltas = new Map<string, { messageId: string; part: number; text: string }>();
  private deltaTimer: ReturnType<typeof setTimeout> | null = null;
  private readonly listeners = new Set<(text: string) => void>();

  /** Every encoded event, in order, as it happens. */
  subscribe(listener: (text: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get lastSeq(): number {
    return this.seq;
  }

  get openPermissions(): ChatPermission[] {
    return [...this.permissions.values()];
  }

  get runningTurn(): ChatInflight | null {
    return this.inflight;
  }

  /** Start over from a transcript. Connected clients must be sent a fresh snapshot; older `since`s no longer replay. */
  reset(messages: readonly ChatMessage[]): void {
    this.dropPendingDeltas();
    this.messages.clear();
    for (const m of messages) this.messages.set(m.id, m);
    this.permissions.clear();
    this.inflight = null;
    this.ring.length = 0;
    this.ringBytes = 0;
    this.floor = ++this.seq;
  }

  upsert(message: ChatMessage): void {
    // Deltas gathered for the older version belong to it: they go out (and apply) before it is replaced.
    this.flushDeltas();
    this.messages.set(message.id, message);
    if (this.inflight && message.role === "assistant" && message.turnId === this.inflight.turnId) this.inflight.messageId = message.id;
    this.emit({ type: "message", message });
  }

  /** Text for `parts[part]` of a message; sent coalesced. Deltas for a message it does not hold are dropped. */
  delta(messageId: string, part: number, text: string): void {
    const message = this.messages.get(messageId);
    const target = message?.parts[part];
    if (!target || (target.type !== "text" && target.type !== "thinking")) return;
    const key = `${messageId}\u0000${part}`;
    const pending = this.pendingDeltas.get(key);
    if (pending) pending.text += text;
    else this.pendingDeltas.set(key, { messageId, part, text });
    this.deltaTimer ??= setTimeout(() => this.flushDeltas(), DELTA_COALESCE_MS);
  }

  setStatus(status: ChatStatus): void {
    const same = status.state === this.status.state && status.error === this.status.error && status.conversationId === this.status.conversationId;
    if (same) return;
    this.status = { ...status };
    this.emit({ type: "status", ...status });
  }

  turnStarted(turnId: string): void {
    this.inflight = { turnId, messageId: null };
    this.emit({ type: "turn", turnId, phase: "start" });
  }

  turnEnded(status: TurnStatus, costUsd?: number): void {
    const turn = this.inflight;
    if (!turn) return;
    this.inflight = null;
    this.emit({ type: "turn", turnId: turn.turnId, phase: "end", status, ...(costUsd !== undefined ? { costUsd } : {}) });
  }

  permissionRequested(permission: ChatPermission): void {
    this.permissions.set(permission.requestId, permission);
    this.emit({ type: "permission.request", ...permission });
  }

  /** First answer wins: false when the request is not open (answered, canceled or unknown). */
  permissionResolved(requestId: string, decision: PermissionDecision, by: PermissionAnswerer): boolean {
    if (!this.permissions.delete(requestId)) return false;
    this.emit({ type: "permission.resolved", requestId, decision, by });
    return true;
  }

  /** Encoded snapshot of the state as of the last event (pending deltas are sent first). */
  snapshot(): string {
    this.flushDeltas();
    return encodeChatServerEvent({
      type: "snapshot",
      seq: this.seq,
      messages: [...this.messages.values()],
      ...(this.inflight ? { inflight: { ...this.inflight } } : {}),
      permissions: this.openPermissions,
      status: this.status,
    });
  }

  /** The encoded events after `since`, or null when they are not all kept (send a snapshot). */
  replay(since: number): string[] | null {
    this.flushDeltas();
    if (since > this.seq || since < this.floor) return null;
    const first = this.ring.findIndex((e) => e.seq > since);
    return first === -1 ? [] : this.ring.slice(first).map((e) => e.text);
  }

  flushDeltas(): void {
    if (this.deltaTimer) clearTimeout(this.deltaTimer);
    this.deltaTimer = null;
    if (this.pendingDeltas.size === 0) return;
    const deltas = [...this.pendingDeltas.values()];
    this.pendingDeltas.clear();
    for (const d of deltas) {
      const part = this.messages.get(d.messageId)?.parts[d.part];
      if (!part || (part.type !== "text" && part.type !== "thinking")) continue;
      part.text += d.text;
      this.record({ type: "delta", messageId: d.messageId, part: d.part, text: d.text });
    }
  }

  dispose(): void {
    this.dropPendingDeltas();
    this.listeners.clear();
  }

  private dropPendingDeltas(): void {
    if (this.deltaTimer) clearTimeout(this.deltaTimer);
    this.deltaTimer = null;
    this.pendingDeltas.clear();
  }

  /** Any other event: deltas gathered so far go first, so order is kept. */
  private emit(event: UnnumberedEvent): void {
    this.flushDeltas();
    this.record(event);
  }

  private record(event: UnnumberedEvent): void {
    const seq = ++this.seq;
    const text = encodeChatServerEvent({ ...event, seq } as ChatJournalEvent);
    this.ring.push({ seq, text });
    this.ringBytes += text.length;
    while (this.ring.length > REPLAY_EVENTS || (this.ringBytes > REPLAY_BYTES && this.ring.length > 1)) {
      const dropped = this.ring.shift()!;
      this.ringBytes -= dropped.text.length;
      this.floor = dropped.seq;
    }
    for (const listener of [...this.listeners]) listener(text);
  }
}
