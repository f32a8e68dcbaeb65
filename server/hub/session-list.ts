import { SESSION_LIST_PREVIEW_MS, SESSION_LIST_UPDATE_MS } from "../contract/protocol.ts";
import { encodeSessionListEvent } from "../contract/session-list.ts";
import { ErrorCode, type SessionInfo, type SessionListEvent } from "../contract/types.ts";
import { refuseUpgrade, type App, type UpgradeHandler } from "../http/app.ts";
import { can } from "../http/credentials.ts";
import type { Emitter } from "../session/emitter.ts";
import type { WebSocketAcceptor } from "./accept.ts";
import { TextBroadcast, type TextBroadcastOptions } from "./text-broadcast.ts";

export const SESSION_LIST_PATH = "/ws/sessions";

/** What the list needs of a session (Session fits). */
export type ListedSession = { readonly id: string; info(): SessionInfo };

/** What the list needs of the registry (SessionRegistry fits). */
export type SessionListSource = {
  readonly events: Pick<Emitter<{ created: [session: ListedSession]; updated: [session: ListedSession, previewOnly: boolean]; removed: [id: string] }>, "on">;
  get(id: string): ListedSession | undefined;
  list(): ListedSession[];
};

export type ThrottleWindows = {
  /** default SESSION_LIST_UPDATE_MS */
  updateMs: number;
  /** default SESSION_LIST_PREVIEW_MS */
  previewMs: number;
};

type Pending = "none" | "preview" | "full";
type Entry = { lastSentAt: number; pending: Pending; dueAt: number; timer: ReturnType<typeof setTimeout> | null };

/**
 * When each session's next `updated` may go out: one per `updateMs` after the last state sent, and
 * one per `previewMs` when every change since then touched only the preview. Changes inside a window
 * are coalesced: `flush(id)` runs once when the window opens and reads the state at that moment,
 * so the last message about a session is always its current state.
 */
export class UpdateThrottle {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly flush: (id: string) => void,
    private readonly windows: ThrottleWindows = { updateMs: SESSION_LIST_UPDATE_MS, previewMs: SESSION_LIST_PREVIEW_MS },
    // Monotonic: a wall-clock step must neither hold an update back nor let two through at once.
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** The session's full state just went out (as `created`): its windows start now, nothing is pending. */
  sent(id: string): void {
    const entry = this.entries.get(id);
    if (entry?.timer) clearTimeout(entry.timer);
    this.entries.set(id, { lastSentAt: this.now(), pending: "none", dueAt: 0, timer: null });
  }

  /** Something in the session's info changed; ignored for sessions not announced yet. */
  changed(id: string, previewOnly: boolean): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    entry.pending = previewOnly && entry.pending !== "full" ? "preview" : "full";
    this.arm(id, entry);
  }

  /** The session is gone: whatever was pending is dropped. */
  forget(id: string): void {
    const entry = this.entries.get(id);
    if (entry?.timer) clearTimeout(entry.timer);
    this.entries.delete(id);
  }

  clear(): void {
    for (const id of [...this.entries.keys()]) this.forget(id);
  }

  private arm(id: string, entry: Entry): void {
    const dueAt = entry.lastSentAt + (entry.pending === "full" ? this.windows.updateMs : this.windows.previewMs);
    if (entry.timer && entry.dueAt <= dueAt) return;
    if (entry.timer) clearTimeout(entry.timer);
    entry.dueAt = dueAt;
    entry.timer = setTimeout(() => this.fire(id, entry), Math.max(0, dueAt - this.now()));
    entry.timer.unref?.();
  }

  private fire(id: string, entry: Entry): void {
    entry.timer = null;
    if (this.entries.get(id) !== entry || entry.pending === "none") return;
    // Timers run on the event loop's millisecond clock and may fire a fraction early.
    if (entry.dueAt > this.now()) {
      this.arm(id, entry);
      return;
    }
    entry.pending = "none";
    entry.lastSentAt = this.now();
    this.flush(id);
  }
}

export type SessionListOptions = TextBroadcastOptions & { windows?: ThrottleWindows };

/**
 * `/ws/sessions`: a `snapshot` on connect, then `created`, throttled `updated` and `removed`.
 * Every message is computed and encoded once and sent to all clients; what clients send is ignored.
 */
export class SessionListStream {
  private readonly clients: TextBroadcast;
  private readonly throttle: UpdateThrottle;
  private readonly unsubscribe: (() => void)[];

  constructor(
    private readonly registry: SessionListSource,
    private readonly acceptor: WebSocketAcceptor,
    options: SessionListOptions = {},
  ) {
    this.clients = new TextBroadcast(options);
    this.throttle = new UpdateThrottle((id) => this.flush(id), options.windows);
    for (const session of registry.list()) this.throttle.sent(session.id);
    this.unsubscribe = [
      registry.events.on("created", (session) => {
        this.throttle.sent(session.id);
        this.broadcast({ type: "created", session: session.info() });
      }),
      // The registry reports a session's first start before `created`: the throttle ignores
      // unannounced sessions, and `created` carries that state anyway.
      registry.events.on("updated", (session, previewOnly) => this.throttle.changed(session.id, previewOnly)),
      registry.events.on("removed", (id) => {
        this.throttle.forget(id);
        this.broadcast({ type: "removed", id });
      }),
    ];
  }

  register(app: App): void {
    app.websocket(SESSION_LIST_PATH, this.handleUpgrade);
  }

  handleUpgrade: UpgradeHandler = (req, socket, head, { url, auth }) => {
    if (!can(auth.principal, "terminal:read")) {
      refuseUpgrade(socket, 403, ErrorCode.CAPABILITY_DENIED, "this token may not read sessions");
      return;
    }
    this.acceptor.accept(req, socket, head, url, auth.principal, (ws) => {
      let snapshot: string;
      try {
        snapshot = encodeSessionListEvent({ type: "snapshot", sessions: this.registry.list().map((s) => s.info()) });
      } catch (err) {
        console.error("webmux: cannot encode the session list snapshot:", err);
        ws.close(1011, "internal error");
        return;
      }
      // Synchronous with the snapshot: no event falls between it and the subscription.
      this.clients.add(ws, snapshot);
    });
  };

  /** Connected list clients. */
  get size(): number {
    return this.clients.size;
  }

  /** Shutdown: stop following the registry and close every list socket. */
  close(code = 1001, reason = "server shutting down"): void {
    for (const off of this.unsubscribe) off();
    this.throttle.clear();
    this.clients.closeAll(code, reason);
  }

  private flush(id: string): void {
    const session = this.registry.get(id);
    // Gone from the registry but `removed` not emitted yet (its program is being ended): `removed` follows.
    if (!session) return;
    this.broadcast({ type: "updated", session: session.info() });
  }

  private broadcast(event: SessionListEvent): void {
    let text: string;
    try {
      text = encodeSessionListEvent(event);
    } catch (err) {
      console.error(`webmux: cannot encode a session list ${event.type} event:`, err);
      return;
    }
    this.clients.send(text);
  }
}
