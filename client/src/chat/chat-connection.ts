/**
 * The chat page's link to `/ws/s/{id}/chat`: connects with `client`, `label`, `since` (the last
 * journal seq applied, read at every connect) and `compress=1` when the device's Network setting
 * says so; decodes every text frame through the contract; reconnects as each close code asks —
 * backoff after a drop, at once after 4408, never after 4404/4409 (HYBRID.md: a moved session is
 * shown, not chased). A plain object: the caller disposes it.
 */
import { decodeChatServerEvent, encodeChatClientMessage, type ChatClientMessage, type ChatServerEvent } from "../../../server/contract/chat.ts";
import { StreamTracker } from "../../../server/contract/stream-tracker.ts";
import { loadCompress } from "../storage/device-settings.ts";
import { DROPPED_CLOSE_CODE, type ProbeResult, type StopReason } from "../terminal/connection.ts";

export type ChatPhase =
  | { phase: "connecting"; attempt: number }
  /** `hello` arrived: the snapshot or replay follows in order, frames may be sent */
  | { phase: "live" }
  | { phase: "waiting"; attempt: number; offline: boolean; retryInMs: number }
  | { phase: "stopped"; reason: StopReason; detail: string };

export type ChatConnectionOptions = {
  sessionId: string;
  clientId: string;
  /** read at every connect, so a renamed device shows up on the next one */
  label: () => string;
  /** the last seq applied, read at every connect; null for a snapshot */
  since: () => number | null;
  /** appends `compress=1`; default: the device's Network setting, read at every connect */
  compress?: boolean;
  onEvent(event: ChatServerEvent): void;
  onPhase(phase: ChatPhase): void;
  /** why a socket that never opened was refused (its HTTP status is hidden from scripts) */
  probe(): Promise<ProbeResult>;
};

export type ChatConnection = {
  /** true when the message went out; false while not connected (nothing is queued) */
  send(message: ChatClientMessage): boolean;
  /** connect again now, from `since` */
  reconnect(): void;
  /** treat the socket as lost (tests) */
  drop(): void;
  dispose(): void;
  readonly stats: Readonly<{ opens: number; waits: number }>;
};

export function chatSocketUrl(
  options: Pick<ChatConnectionOptions, "sessionId" | "clientId">,
  label: string,
  since: number | null,
  compress: boolean,
  base: string = window.location.href,
): string {
  const url = new URL(`/ws/s/${encodeURIComponent(options.sessionId)}/chat`, base);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  url.searchParams.set("client", options.clientId);
  if (label !== "") url.searchParams.set("label", label);
  if (since !== null) url.searchParams.set("since", String(since));
  if (compress) url.searchParams.set("compress", "1");
  return url.toString();
}

export function makeChatConnection(options: ChatConnectionOptions): ChatConnection {
  const stats = { opens: 0, waits: 0 };
  let socket: WebSocket | null = null;
  let opened = false;
  let reachedLive = false;
  let attempt = 0;
  let retryTimer: ReturnType<typeof setTimeout> | null = null;
  let phase: ChatPhase = { phase: "connecting", attempt: 0 };
  let disposed = false;

  const setPhase = (next: ChatPhase) => {
    phase = next;
    options.onPhase(next);
  };

  function connect(): void {
    clearRetry();
    if (disposed) return;
    setPhase({ phase: "connecting", attempt });
    const ws = new WebSocket(chatSocketUrl(options, options.label(), options.since(), options.compress ?? loadCompress()));
    socket = ws;
    opened = false;
    reachedLive = false;
    ws.onopen = () => {
      opened = true;
      stats.opens += 1;
    };
    ws.onmessage = (message) => {
      if (typeof message.data !== "string") return; // the chat protocol is text
      const event = decodeChatServerEvent(message.data);
      if (event.type === "invalid") {
        console.warn("webmux: ignoring a chat frame:", event.detail);
        return;
      }
      if (event.type === "hello") {
        reachedLive = true;
        attempt = 0;
      }
      options.onEvent(event);
      if (event.type === "hello") setPhase({ phase: "live" });
    };
    ws.onclose = (event) => {
      if (socket !== ws) return;
      socket = null;
      void closed(event.code, event.reason, opened);
    };
  }

  async function closed(code: number, reason: string, wasOpen: boolean): Promise<void> {
    if (disposed) return;
    let plan = StreamTracker.planReconnect(code, reason);
    if (!wasOpen) {
      const probed = await options.probe().catch((): ProbeResult => "ok");
      if (disposed) return;
      if (probed === "unauthorized") plan = { action: "stop", reason: "unauthorized", detail: "not logged in" };
      if (probed === "not_found") plan = { action: "stop", reason: "not_found", detail: "session not found" };
    }
    if (plan.action === "stop") return setPhase({ phase: "stopped", reason: plan.reason, detail: plan.detail });
    // 4408 asks for an immediate reconnect; one that fails before its hello backs off instead.
    if (plan.action === "now" && reachedLive) return connect();
    scheduleRetry();
  }

  function scheduleRetry(): void {
    clearRetry();
    stats.waits += 1;
    const offline = !navigator.onLine;
    const delay = StreamTracker.backoffDelay(attempt);
    setPhase({ phase: "waiting", attempt, offline, retryInMs: offline ? 0 : delay });
    attempt += 1;
    // Offline, no timer: the `online` event reconnects.
    if (!offline) retryTimer = setTimeout(connect, delay);
  }

  function clearRetry(): void {
    if (retryTimer !== null) clearTimeout(retryTimer);
    retryTimer = null;
  }

  /** Forget the current socket without waiting for a close handshake that may never complete. */
  function abandon(): void {
    const ws = socket;
    if (!ws) return;
    socket = null;
    ws.onopen = ws.onmessage = ws.onclose = null;
    try {
      ws.close(DROPPED_CLOSE_CODE, "connection lost");
    } catch {
      // Already closing.
    }
  }

  const onOffline = () => {
    if (!socket) return;
    abandon();
    scheduleRetry();
  };
  const onOnline = () => phase.phase === "waiting" && connect();
  const onVisible = () => document.visibilityState === "visible" && phase.phase === "waiting" && connect();
  window.addEventListener("offline", onOffline);
  window.addEventListener("online", onOnline);
  document.addEventListener("visibilitychange", onVisible);

  connect();

  return {
    stats,
    send(message) {
      if (!socket || socket.readyState !== WebSocket.OPEN) return false;
      socket.send(encodeChatClientMessage(message));
      return true;
    },
    reconnect() {
      if (disposed) return;
      abandon();
      attempt = 0;
      connect();
    },
    drop() {
      if (!socket) return;
      abandon();
      scheduleRetry();
    },
    dispose() {
      if (disposed) return;
      disposed = true;
      clearRetry();
      window.removeEventListener("offline", onOffline);
      window.removeEventListener("online", onOnline);
      document.removeEventListener("visibilitychange", onVisible);
      const ws = socket;
      socket = null;
      if (ws) {
        ws.onopen = ws.onmessage = ws.onclose = null;
        ws.close(1000, "closed");
      }
    },
  };
}
