/**
 * One terminal's link to `/ws/s/{id}`: connects, decodes frames through the contract, keeps the
 * resume point with StreamTracker and reconnects as each close code asks (backoff after a drop,
 * at once after 4408, never after 4404/4409/4410). A plain object: the caller disposes it.
 */
import { loadCompress } from "../storage/device-settings.ts";
import {
  decodeServerFrame,
  encodeAutoReply,
  encodeInput,
  encodeResize,
  encodeResync,
  encodeTakeControl,
  type ServerMessage,
} from "../../../server/contract/frames.ts";
import { StreamTracker, type ReconnectPlan, type ResumePoint } from "../../../server/contract/stream-tracker.ts";

export type StopReason = Extract<ReconnectPlan, { action: "stop" }>["reason"];

export type ConnectionPhase =
  | { phase: "connecting"; attempt: number }
  /** the socket is open and the replay it announced has not ended yet */
  | { phase: "replaying" }
  | { phase: "live" }
  | { phase: "waiting"; attempt: number; offline: boolean; retryInMs: number }
  | { phase: "stopped"; reason: StopReason; detail: string };

/** What the HTTP API says about the session after a socket that never opened (a refused handshake). */
export type ProbeResult = "ok" | "not_found" | "unauthorized";

export type TerminalConnectionOptions = {
  sessionId: string;
  clientId: string;
  /** read at every connect, so a renamed device shows up on the next one */
  label: () => string;
  resume: ResumePoint | null;
  /** appends `compress=1`; default: the device's Network setting, read at every connect */
  compress?: boolean;
  /** every server message, after the tracker has counted it */
  onMessage(message: ServerMessage): void;
  onPhase(phase: ConnectionPhase): void;
  probe(): Promise<ProbeResult>;
};

export type ConnectionStats = {
  /** payload bytes of every frame received, over all sockets of this connection */
  bytesReceived: number;
  /** sockets opened */
  opens: number;
  /** times a reconnect waited (backoff or offline) instead of connecting at once */
  waits: number;
};

export type TerminalConnection = {
  readonly tracker: StreamTracker;
  readonly stats: Readonly<ConnectionStats>;
  /** true when the frame went out; false while not connected (nothing is queued) */
  send(frame: Uint8Array): boolean;
  sendInput(data: string | Uint8Array): boolean;
  sendAutoReply(data: string | Uint8Array): boolean;
  sendResize(cols: number, rows: number): boolean;
  takeControl(): boolean;
  resync(): boolean;
  /** connect again now: after a restart of an exited session, or when the user asks */
  reconnect(): void;
  /** treat the socket as lost (the browser went offline; tests) */
  drop(): void;
  dispose(): void;
};

/** A client-side close that means "the network went away", outside the server's 4xxx range. */
export const DROPPED_CLOSE_CODE = 3000;

export function terminalSocketUrl(options: Pick<TerminalConnectionOptions, "sessionId" | "clientId" | "compress">, label: string, resume: ResumePoint | null, base: string = window.location.href): string {
  const url = new URL(`/ws/s/${encodeURIComponent(options.sessionId)}`, base);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  url.searchParams.set("client", options.clientId);
  if (label !== "") url.searchParams.set("label", label);
  if (resume) {
    url.searchParams.set("generation", resume.generation);
    url.searchParams.set("offset", String(resume.offset));
  }
  if (options.compress) url.searchParams.set("compress", "1");
  return url.toString();
}

export function makeTerminalConnection(options: TerminalConnectionOptions): TerminalConnection {
  const tracker = new StreamTracker(options.resume);
  const stats: ConnectionStats = { bytesReceived: 0, opens: 0, waits: 0 };
  let socket: WebSocket | null = null;
  let opened = false;
  let reachedLive = false;
  let attempt = 0;
  let retryTimer: ReturnType<typeof setTimeout> | null = null;
  let phase: ConnectionPhase = { phase: "connecting", attempt: 0 };
  let disposed = false;

  const setPhase = (next: ConnectionPhase) => {
    phase = next;
    options.onPhase(next);
  };

  function connect(): void {
    clearRetry();
    if (disposed) return;
    setPhase({ phase: "connecting", attempt });
    const compress = options.compress ?? loadCompress();
    const ws = new WebSocket(terminalSocketUrl({ ...options, compress }, options.label(), tracker.resumePoint()));
    ws.binaryType = "arraybuffer";
    socket = ws;
    opened = false;
    reachedLive = false;
    ws.onopen = () => {
      opened = true;
      stats.opens += 1;
    };
    ws.onmessage = (event) => {
      if (!(event.data instanceof ArrayBuffer)) return; // the terminal protocol is binary
      const bytes = new Uint8Array(event.data);
      stats.bytesReceived += bytes.length;
      const message = decodeServerFrame(bytes);
      if (message.type === "invalid") {
        console.warn("webmux: ignoring a server frame:", message.detail);
        return;
      }
      tracker.observe(message);
      if (message.type === "position") setPhase({ phase: "replaying" });
      if (message.type === "status" && phase.phase === "replaying") {
        reachedLive = true;
        attempt = 0;
        setPhase({ phase: "live" });
      }
      options.onMessage(message);
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
      // A refused handshake hides its HTTP status from scripts: ask the HTTP API why.
      const probed = await options.probe().catch((): ProbeResult => "ok");
      if (disposed) return;
      if (probed === "unauthorized") plan = { action: "stop", reason: "unauthorized", detail: "not logged in" };
      if (probed === "not_found") plan = { action: "stop", reason: "not_found", detail: "session not found" };
    }
    if (plan.action === "stop") {
      setPhase({ phase: "stopped", reason: plan.reason, detail: plan.detail });
      return;
    }
    // 4408 asks for an immediate reconnect; one that fails before its replay ends backs off instead.
    if (plan.action === "now" && reachedLive) {
      connect();
      return;
    }
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
    if (socket) {
      abandon();
      scheduleRetry();
    }
  };
  const onOnline = () => {
    if (phase.phase === "waiting") connect();
  };
  const onVisible = () => {
    if (document.visibilityState === "visible" && phase.phase === "waiting") connect();
  };
  window.addEventListener("offline", onOffline);
  window.addEventListener("online", onOnline);
  document.addEventListener("visibilitychange", onVisible);

  const send = (frame: Uint8Array): boolean => {
    if (!socket || socket.readyState !== WebSocket.OPEN) return false;
    // Contract encoders allocate plain ArrayBuffers; the type only says "ArrayBufferLike".
    socket.send(frame as Uint8Array<ArrayBuffer>);
    return true;
  };

  connect();

  return {
    tracker,
    stats,
    send,
    sendInput: (data) => send(encodeInput(data)),
    sendAutoReply: (data) => send(encodeAutoReply(data)),
    sendResize: (cols, rows) => send(encodeResize({ cols, rows })),
    takeControl: () => send(encodeTakeControl()),
    resync: () => send(encodeResync()),
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
