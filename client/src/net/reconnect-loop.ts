/**
 * The reconnect machinery a stream's WebSocket shares with every other one: one socket at a time,
 * the backoff counter (backoffDelay in the contract; offline, no timer: the `online` event or a
 * visible page reconnects), the close plan (planReconnect, corrected by the HTTP probe
 * after a refused handshake), and dropping a dead socket without its close handshake. What a frame
 * means and when the stream counts as live stay with the caller, which says so with `markLive`.
 * A plain object: the caller disposes it.
 */
import { backoffDelay, planReconnect, type ReconnectPlan } from "../../../server/contract/reconnect.ts";

export type StopReason = Extract<ReconnectPlan, { action: "stop" }>["reason"];

/** What the HTTP API says about the session after a socket that never opened (a refused handshake). */
export type ProbeResult = "ok" | "not_found" | "unauthorized";

/** A client-side close that means "the network went away", outside the server's 4xxx range. */
export const DROPPED_CLOSE_CODE = 3000;

/** The phases the loop itself sets; a stream adds its own (live, replaying) through `setPhase`. */
export type ReconnectPhase =
  | { phase: "connecting"; attempt: number }
  | { phase: "waiting"; attempt: number; offline: boolean; retryInMs: number }
  | { phase: "stopped"; reason: StopReason; detail: string };

/** The counters the loop keeps in the caller's stats object. */
export type ReconnectCounts = {
  /** sockets opened */
  opens: number;
  /** times a reconnect waited (backoff or offline) instead of connecting at once */
  waits: number;
};

export type ReconnectLoopOptions<P> = {
  /** the caller's stats: the loop adds to `opens` and `waits` in place */
  stats: ReconnectCounts;
  /** a new socket for the next attempt with its `onmessage` set; the loop owns `onopen`/`onclose` */
  open(): WebSocket;
  /** why a socket that never opened was refused (its HTTP status is hidden from scripts) */
  probe(): Promise<ProbeResult>;
  onPhase(phase: P | ReconnectPhase): void;
};

export type ReconnectLoop<P> = {
  phase(): P | ReconnectPhase;
  /** a phase of the stream's own, e.g. live once its first frames say so */
  setPhase(next: P): void;
  /** true when the data went out; false while not connected (nothing is queued) */
  send(data: string | ArrayBufferView<ArrayBuffer>): boolean;
  /** the stream is live: backoff starts over, and a 4408 reconnects at once */
  markLive(): void;
  /** connect again now, from the first backoff step */
  reconnect(): void;
  /** treat the socket as lost and wait before the next attempt */
  drop(): void;
  dispose(): void;
};

/** Starts connecting at once. */
export function makeReconnectLoop<P extends { phase: string }>(options: ReconnectLoopOptions<P>): ReconnectLoop<P> {
  const { stats } = options;
  let phase: P | ReconnectPhase = { phase: "connecting", attempt: 0 };
  let socket: WebSocket | null = null;
  let opened = false;
  let reachedLive = false;
  let attempt = 0;
  let retryTimer: ReturnType<typeof setTimeout> | null = null;
  let disposed = false;

  const setPhase = (next: P | ReconnectPhase) => {
    phase = next;
    options.onPhase(next);
  };

  function connect(): void {
    clearRetry();
    if (disposed) return;
    setPhase({ phase: "connecting", attempt });
    const ws = options.open();
    socket = ws;
    opened = false;
    reachedLive = false;
    ws.onopen = () => {
      opened = true;
      stats.opens += 1;
    };
    ws.onclose = (event) => {
      if (socket !== ws) return;
      socket = null;
      void closed(event.code, event.reason, opened);
    };
  }

  async function closed(code: number, reason: string, wasOpen: boolean): Promise<void> {
    if (disposed) return;
    let plan = planReconnect(code, reason);
    if (!wasOpen) {
      const probed = await options.probe().catch((): ProbeResult => "ok");
      if (disposed) return;
      if (probed === "unauthorized") plan = { action: "stop", reason: "unauthorized", detail: "not logged in" };
      if (probed === "not_found") plan = { action: "stop", reason: "not_found", detail: "session not found" };
    }
    if (plan.action === "stop") return setPhase({ phase: "stopped", reason: plan.reason, detail: plan.detail });
    // 4408 asks for an immediate reconnect; one that fails before it went live backs off instead.
    if (plan.action === "now" && reachedLive) return connect();
    scheduleRetry();
  }

  function scheduleRetry(): void {
    clearRetry();
    stats.waits += 1;
    const offline = !navigator.onLine;
    const delay = backoffDelay(attempt);
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

  function drop(): void {
    if (!socket) return;
    abandon();
    scheduleRetry();
  }

  const onOnline = () => phase.phase === "waiting" && connect();
  const onVisible = () => document.visibilityState === "visible" && phase.phase === "waiting" && connect();
  window.addEventListener("offline", drop);
  window.addEventListener("online", onOnline);
  document.addEventListener("visibilitychange", onVisible);

  connect();

  return {
    phase: () => phase,
    setPhase,
    send(data) {
      if (!socket || socket.readyState !== WebSocket.OPEN) return false;
      socket.send(data);
      return true;
    },
    markLive() {
      reachedLive = true;
      attempt = 0;
    },
    reconnect() {
      if (disposed) return;
      abandon();
      attempt = 0;
      connect();
    },
    drop,
    dispose() {
      if (disposed) return;
      disposed = true;
      clearRetry();
      window.removeEventListener("offline", drop);
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
