/**
 * The session host serves the terminal streams (docs/design.md § The session host serves the
 * streams). The server authenticates an upgrade of `/ws/s/{id}` and hands its TCP descriptor here
 * over the stream channel (`streams.sock`, SCM_RIGHTS, peers of this uid only, then the host's
 * secret); the host completes the WebSocket handshake and serves the stream with the same
 * TerminalStream the server uses, over a Session of its own that follows the run it owns. So a
 * keystroke goes socket → PTY → socket in one process, and a restart of the server does not even
 * drop the connection. The server hears what its list shows (seat, clients, grid, input) as events.
 */
import type { IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import { MAX_CLIENT_FRAME_BYTES, CloseCode, PolicyCloseReason } from "../contract/protocol.ts";
import { WebSocketAcceptor } from "../hub/accept.ts";
import { attachTerminalSocket } from "../hub/terminal-hub.ts";
import type { TerminalConnection } from "../hub/terminal-connection.ts";
import { TerminalStream } from "../hub/terminal-stream.ts";
import type { RemoteSeat, Session, SessionScreen } from "../session/session.ts";
import type { HeadlessScreenStats, ReadResult } from "../session/headless-screen.ts";
import { FdListener, socketFromFd, type FdChannel, type FdHandoff } from "./fd-channel.ts";
import { secretsEqual, type Principal } from "../http/credentials.ts";
import { parseHandedMessage, principalOf, type HandedMessage, type HandedPrincipal } from "./stream-handoff.ts";

/** A streamed session whose last connection left keeps its mirror this long, for the reconnect that usually follows (a reload, a phone waking). */
export const STREAM_SESSION_LINGER_MS = 30_000;
/** A person's input is told to the server at most this often per session (the first at once: it clears attention). */
export const INPUT_NOTE_INTERVAL_MS = 1_000;
/** RFC 6455 § 7.4.1 "going away": a stream the host stops serving; the client reconnects and resumes. */
export const CLOSE_GOING_AWAY = 1001;
/** Handed connections the host serves at most (the server counts them against its own limits first). */
const MAX_HANDED_STREAMS = 4096;

/** What the server's mirror answered for a snapshot: the state, and its count of lost output (a redraw follows a new one). */
export type RemoteSnapshot = { state: string; gaps: number };

/**
 * The screen of a Session the host streams from: the server's mirror, which parses every byte
 * anyway, so the host parses none (one headless terminal per session across both processes, not
 * two). A replay that needs a snapshot asks the server for it, after every byte before it has gone
 * to the server's mirror, so the snapshot is the state as of the replay's position. With no server
 * to ask, the replay falls back as for a mirror that failed: the raw bytes, or the modes and a
 * redraw request (docs/design.md § Snapshots).
 */
export class RemoteScreen implements SessionScreen {
  private gaps = 0;

  constructor(private readonly ask: (options?: { scrollback?: number }) => Promise<RemoteSnapshot>) {}

  write(): void {}
  resize(): void {}
  reset(): void {}
  dispose(): void {}

  async serialize(options?: { scrollback?: number }): Promise<string> {
    const answer = await this.ask(options);
    this.gaps = Math.max(this.gaps, answer.gaps);
    return answer.state;
  }

  /** The list's preview is the server's (its own mirror); a status frame from here carries none. */
  async preview(): Promise<string[]> {
    return [];
  }

  read(): Promise<ReadResult> {
    return Promise.reject(new Error("the session host reads no screen: the server's mirror does"));
  }

  onChange(): () => void {
    return () => {};
  }

  stats(): HeadlessScreenStats {
    return { postedBytes: 0, parsedBytes: 0, pendingBytes: 0, droppedBytes: 0, gaps: this.gaps, skimmedBytes: 0, skimming: false };
  }
}

/** What the host's sessions give the streams: a Session over a run, and the way to the server. */
export interface StreamSource {
  /** The current run of session `id`, as its ref; null when there is none or it is not served here (a hybrid session). */
  currentRef(id: string): number | null;
  /** A Session following run `ref` from now on (its ring and state as of now); `close` stops the feed. */
  openSession(ref: number): { session: Session; close(): void } | null;
  /** The streamed Session's grid changed: the host's record of it, and the server, follow. */
  gridChanged(id: string, cols: number, rows: number): void;
  /** An event for the connected server (none: it is dropped; the next server asks at adoption). */
  emit(name: string, body: unknown): void;
}

/** A connection as the next server learns it at adoption, to count it and check its principal. */
export type HandedStreamInfo = { conn: string; session: string; principal: HandedPrincipal; address: string };

type Streamed = {
  id: string;
  ref: number;
  session: Session;
  stream: TerminalStream;
  close(): void;
  linger: ReturnType<typeof setTimeout> | null;
  lastSeat: string;
  lastInputNoteAt: number;
  inputTimer: ReturnType<typeof setTimeout> | null;
  offs: (() => void)[];
};

type Handed = HandedStreamInfo & { socket: Socket; terminal: TerminalConnection | null };

export class HostedStreams {
  private listener: FdListener | null = null;
  private path: string | null = null;
  private readonly channels = new Set<FdChannel>();
  private readonly streamed = new Map<number, Streamed>();
  private readonly handed = new Map<string, Handed>();
  /** Connection limits are the server's (it counted the socket before handing it); here only a bound against a runaway. */
  private readonly acceptor = new WebSocketAcceptor(MAX_CLIENT_FRAME_BYTES, { perAddress: MAX_HANDED_STREAMS, total: MAX_HANDED_STREAMS });

  /** When each handed stream's credential runs out, as the server that handed it knew. */
  private readonly expiries = new WeakMap<Principal, number>();

  constructor(
    private readonly source: StreamSource,
    private readonly secret: () => string | null,
    private readonly log: (line: string) => void = () => {},
  ) {
    // The server closes a stream whose credential is revoked or runs out; with no server running
    // only the expiry can still be known, and the host closes the stream itself when it comes.
    this.acceptor.watchCredentials({
      closeReason: (principal) => {
        const at = this.expiries.get(principal);
        return at !== undefined && Date.now() >= at ? PolicyCloseReason.EXPIRED : null;
      },
      msUntilExpiry: (principal) => {
        const at = this.expiries.get(principal);
        return at === undefined ? null : Math.max(0, at - Date.now());
      },
    });
  }

  /** Take handed streams at `path` from now on. */
  listen(path: string): void {
    this.path = path;
    this.listener = new FdListener(path);
    this.listener.events.on("channel", (channel) => this.admit(channel));
    this.listener.events.on("refused", (uid) => this.log(`refused a stream channel of uid ${uid}`));
  }

  /**
   * Stop taking handed streams (the connections served go on until closeAll). `keepPath`: a
   * successor host listens at the path now, and it must stay its.
   */
  stopListening(options: { keepPath?: boolean } = {}): void {
    this.listener?.close(options);
    this.listener = null;
    for (const channel of this.channels) channel.close();
    this.channels.clear();
  }

  /** Listen again at the same path (a handover failed: a successor may have bound it meanwhile). */
  relisten(): void {
    const path = this.path;
    this.stopListening({ keepPath: true });
    if (path) this.listen(path);
  }

  get connectionCount(): number {
    return this.handed.size;
  }

  private admit(channel: FdChannel): void {
    this.channels.add(channel);
    let trusted = false;
    channel.events.on("closed", () => this.channels.delete(channel));
    channel.events.on("message", (data, fds) => {
      const message = parseHandedMessage(data);
      if (!trusted) {
        // The first message presents the secret; anything else ends the channel, its descriptors closed.
        const secret = this.secret();
        if (message?.type === "server" && secret !== null && secretsEqual(message.secret, secret)) trusted = true;
        else channel.close();
        return;
      }
      if (message?.type !== "stream" || fds.count !== 1) return; // dropped; its descriptors are closed after this returns
      this.accept(message, fds);
    });
  }

  private accept(message: Extract<HandedMessage, { type: "stream" }>, fds: FdHandoff): void {
    if (this.handed.has(message.conn)) return;
    const socket = socketFromFd(fds.take(0));
    // docs/design.md, Hardening and limits: every socket has its error listener from the moment it is ours.
    socket.on("error", () => {});
    const handed: Handed = { conn: message.conn, session: message.session, principal: message.principal, address: message.address, socket, terminal: null };
    this.handed.set(message.conn, handed);
    socket.once("close", () => {
      this.handed.delete(message.conn);
      this.source.emit("stream-closed", { conn: message.conn });
    });
    const principal = principalOf(message.principal);
    if (message.principal.expiresAt !== undefined) this.expiries.set(principal, message.principal.expiresAt);
    const url = new URL(message.url, "http://webmux.invalid");
    // ws completes the handshake from the request's method and headers, as it would in the server.
    const req = { method: "GET", url: message.url, headers: message.headers, socket: { remoteAddress: message.address } } as unknown as IncomingMessage;
    this.acceptor.accept(req, socket, Buffer.from(message.head, "base64"), url, principal, (ws) => {
      const streamed = this.streamedFor(message.session);
      if (!streamed) {
        ws.close(CloseCode.NOT_FOUND, "session not found");
        return;
      }
      if (streamed.linger) clearTimeout(streamed.linger);
      streamed.linger = null;
      handed.terminal = attachTerminalSocket(ws, url, principal, streamed.stream, (conn) => this.leave(streamed, conn));
      this.noteSeat(streamed);
    });
  }

  /** The Session serving session `id`'s current run, made at its first connection. */
  private streamedFor(id: string): Streamed | null {
    const ref = this.source.currentRef(id);
    if (ref === null) return null;
    const known = this.streamed.get(ref);
    if (known) return known;
    const opened = this.source.openSession(ref);
    if (!opened) return null;
    const { session } = opened;
    const streamed: Streamed = { id, ref, session, stream: new TerminalStream(session), close: opened.close, linger: null, lastSeat: "", lastInputNoteAt: 0, inputTimer: null, offs: [] };
    streamed.offs.push(
      session.events.on("changed", () => {
        this.noteSeat(streamed);
        this.source.gridChanged(id, session.cols, session.rows);
      }),
      session.events.on("input", () => this.noteInput(streamed)),
    );
    this.streamed.set(ref, streamed);
    return streamed;
  }

  private leave(streamed: Streamed, conn: TerminalConnection): void {
    streamed.stream.detach(conn);
    this.noteSeat(streamed);
    if (streamed.stream.size > 0 || streamed.linger) return;
    // An exited run's stream has nothing to linger for.
    const ms = streamed.session.status === "running" ? STREAM_SESSION_LINGER_MS : 0;
    streamed.linger = setTimeout(() => this.release(streamed), ms);
    streamed.linger.unref?.();
  }

  /** Stop serving the run's streams: connections still open close with `code`. */
  private release(streamed: Streamed, code: number = CLOSE_GOING_AWAY, reason = "session host closing the stream"): void {
    if (this.streamed.get(streamed.ref) !== streamed) return;
    // (first: each connection's leaving still goes through `leave`, and its linger is cleared below)
    streamed.stream.closeAll(code, reason);
    this.streamed.delete(streamed.ref);
    if (streamed.linger) clearTimeout(streamed.linger);
    if (streamed.inputTimer) clearTimeout(streamed.inputTimer);
    for (const off of streamed.offs) off();
    streamed.stream.dispose();
    streamed.close();
    streamed.session.release();
    if (this.source.currentRef(streamed.id) === streamed.ref) this.source.emit("seat", { id: streamed.id, controller: null, clients: 0 });
  }

  /** The seat and connection count as the server's list shows them, told when they change. */
  private noteSeat(streamed: Streamed): void {
    const seat = this.seatOf(streamed);
    const key = JSON.stringify(seat);
    if (key === streamed.lastSeat) return;
    streamed.lastSeat = key;
    if (this.source.currentRef(streamed.id) === streamed.ref) this.source.emit("seat", { id: streamed.id, ...seat });
  }

  private seatOf(streamed: Streamed): RemoteSeat {
    return { controller: streamed.session.lease.info, clients: streamed.stream.size };
  }

  /** A person typed: the server's list marks the session used and clears its attention, once a second at most. */
  private noteInput(streamed: Streamed): void {
    if (streamed.inputTimer) return;
    const since = Date.now() - streamed.lastInputNoteAt;
    const send = () => {
      streamed.inputTimer = null;
      streamed.lastInputNoteAt = Date.now();
      this.source.emit("input", { id: streamed.id });
    };
    if (since >= INPUT_NOTE_INTERVAL_MS) send();
    else {
      streamed.inputTimer = setTimeout(send, INPUT_NOTE_INTERVAL_MS - since);
      streamed.inputTimer.unref?.();
    }
  }

  /** The seat of session `id` where this host serves its streams, or null. */
  seat(id: string): RemoteSeat | null {
    const ref = this.source.currentRef(id);
    const streamed = ref === null ? undefined : this.streamed.get(ref);
    return streamed && streamed.stream.size > 0 ? this.seatOf(streamed) : null;
  }

  /** The connections served now, for a server that adopts the sessions. */
  list(): HandedStreamInfo[] {
    return [...this.handed.values()].map(({ conn, session, principal, address }) => ({ conn, session, principal, address }));
  }

  /** Close connections by their ids (a credential revoked or expired: 1008). */
  closeConnections(conns: readonly string[], code: number, reason: string): void {
    for (const id of conns) {
      const handed = this.handed.get(id);
      if (!handed) continue;
      if (handed.terminal) handed.terminal.close(code, reason);
      else handed.socket.destroy();
    }
  }

  /** The server resized the session (not through a stream): the streamed Session and every connection follow. */
  followResize(id: string, cols: number, rows: number): void {
    const ref = this.source.currentRef(id);
    const streamed = ref === null ? undefined : this.streamed.get(ref);
    if (!streamed || (streamed.session.cols === cols && streamed.session.rows === rows)) return;
    streamed.session.resize(cols, rows);
    streamed.stream.announceControl();
  }

  setTitle(id: string, title: string | null): void {
    const ref = this.source.currentRef(id);
    if (ref !== null) this.streamed.get(ref)?.session.setTitle(title ?? "");
  }

  /** The session was deleted: its connections close with 4404, as the server's would. */
  closeSession(id: string, code: number, reason: string): void {
    for (const streamed of [...this.streamed.values()]) if (streamed.id === id) this.release(streamed, code, reason);
  }

  /** Every connection closes (the host hands its sessions over, or exits); clients reconnect and resume. */
  closeAll(code: number, reason: string): void {
    for (const streamed of [...this.streamed.values()]) this.release(streamed, code, reason);
    for (const handed of this.handed.values()) handed.socket.destroy();
  }
}
