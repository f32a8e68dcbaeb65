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
  encodeReplayParsed,
  encodeResize,
  encodeResync,
  encodeTakeControl,
  type ServerMessage,
} from "../../../server/contract/frames.ts";
import { terminalStreamPath } from "../../../server/contract/terminal-query.ts";
import { StreamTracker, type ResumePoint } from "../../../server/contract/stream-tracker.ts";
import { makeReconnectLoop, type ProbeResult, type ReconnectCounts, type ReconnectLoop, type ReconnectPhase } from "../net/reconnect-loop.ts";

export { DROPPED_CLOSE_CODE, type ProbeResult, type StopReason } from "../net/reconnect-loop.ts";

/** The terminal's own phases, beside the reconnect loop's connecting / waiting / stopped. */
type StreamPhase =
  /** the socket is open and the replay it announced has not ended yet */
  | { phase: "replaying" }
  | { phase: "live" };

export type ConnectionPhase = ReconnectPhase | StreamPhase;

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

export type ConnectionStats = ReconnectCounts & {
  /** payload bytes of every frame received, over all sockets of this connection */
  bytesReceived: number;
};

export type TerminalConnection = {
  readonly tracker: StreamTracker;
  readonly stats: Readonly<ConnectionStats>;
  /** true when the frame went out; false while not connected (nothing is queued) */
  send(frame: Uint8Array): boolean;
  sendInput(data: string | Uint8Array): boolean;
  sendAutoReply(data: string | Uint8Array): boolean;
  /** which socket this is (bumped at every connect), for replayParsed */
  readonly socket: number;
  /** tell the server socket `socket` has parsed one more replay (0x07); nothing if it is gone */
  replayParsed(socket: number): boolean;
  sendResize(cols: number, rows: number): boolean;
  takeControl(): boolean;
  resync(): boolean;
  /** connect again now: after a restart of an exited session, or when the user asks */
  reconnect(): void;
  /** treat the socket as lost (the browser went offline; tests) */
  drop(): void;
  dispose(): void;
};

export function terminalSocketUrl(options: Pick<TerminalConnectionOptions, "sessionId" | "clientId" | "compress">, label: string, resume: ResumePoint | null, base: string = window.location.href): string {
  // docs/protocol.md § Client → server frames: this client sends 0x07 once it parsed each replay.
  const path = terminalStreamPath(options.sessionId, { client: options.clientId, label, resume, compress: options.compress, replayAck: true });
  const url = new URL(path, base);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  return url.toString();
}

export function makeTerminalConnection(options: TerminalConnectionOptions): TerminalConnection {
  const tracker = new StreamTracker(options.resume);
  const stats: ConnectionStats = { bytesReceived: 0, opens: 0, waits: 0 };
  let socket = 0;
  function open(): WebSocket {
    socket++;
    const compress = options.compress ?? loadCompress();
    const ws = new WebSocket(terminalSocketUrl({ ...options, compress }, options.label(), tracker.resumePoint()));
    ws.binaryType = "arraybuffer";
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
      if (message.type === "position") loop.setPhase({ phase: "replaying" });
      if (message.type === "status" && loop.phase().phase === "replaying") {
        loop.markLive();
        loop.setPhase({ phase: "live" });
      }
      options.onMessage(message);
    };
    return ws;
  }

  const loop: ReconnectLoop<StreamPhase> = makeReconnectLoop({ stats, open, probe: options.probe, onPhase: options.onPhase });

  // Contract encoders allocate plain ArrayBuffers; the type only says "ArrayBufferLike".
  const send = (frame: Uint8Array): boolean => loop.send(frame as Uint8Array<ArrayBuffer>);

  return {
    tracker,
    stats,
    send,
    sendInput: (data) => send(encodeInput(data)),
    sendAutoReply: (data) => send(encodeAutoReply(data)),
    get socket() {
      return socket;
    },
    replayParsed: (which) => which === socket && send(encodeReplayParsed()),
    sendResize: (cols, rows) => send(encodeResize({ cols, rows })),
    takeControl: () => send(encodeTakeControl()),
    resync: () => send(encodeResync()),
    reconnect: loop.reconnect,
    drop: loop.drop,
    dispose: loop.dispose,
  };
}
