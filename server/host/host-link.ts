/**
 * The server's side of the session host (docs/design.md, What survives a restart): a SpawnPty
 * whose programs run in the host, so each server-side Session (ring, screen, hub) mirrors a run
 * the host owns. Output arrives in OUTPUT frames in PTY order, keystrokes leave in INPUT frames;
 * everything else is a request. At connect the server adopts what the host holds.
 */
import type { PtyExit, PtyProcess, PtySpawnOptions, SpawnPty } from "../pty/pty.ts";
import { PtySpawnError, type PtyErrorCode } from "../pty/pty.ts";
import { assertSpawnable } from "../pty/pty-support.ts";
import { Emitter } from "../session/emitter.ts";
import { WEBMUX_BUILD } from "./build.ts";
import { HostCallError, type HostConnection } from "./host-client.ts";
import type { AdoptedSession, HostedSessionMeta, HostedSubmission } from "./hosted-sessions.ts";
import { PeerRole } from "./protocol.ts";
import { connectHost, type StartHostOptions } from "./spawn-host.ts";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { Principal } from "../http/credentials.ts";
import type { RemoteSeat } from "../session/session.ts";
import type { WebSocketAcceptor } from "../hub/accept.ts";
import { connectionAddress } from "../hub/connection-limit.ts";
import { hostPaths } from "./host-dir.ts";
import type { HandedStreamInfo } from "./hosted-streams.ts";
import { handoffDisabled, principalOf, StreamHandoff } from "./stream-handoff.ts";

/** A session the host held when the server connected, with its ring's bytes. */

/**
 * Tests only (e2e/compose-host-restart.spec.ts): WEBMUX_TEST_HOLD_SUBMIT_ANSWERS=1 keeps every
 * submission's `written` from its clients after the host wrote it, so a test can kill the server
 * inside that window deterministically (docs/design.md, What survives a restart).
 */
const HOLD_SUBMIT_ANSWERS = process.env.WEBMUX_TEST_HOLD_SUBMIT_ANSWERS === "1";

export type AdoptedRun = AdoptedSession & { bytes: Uint8Array; pty: PtyProcess | null };

export type HostLinkEvents = {
  /** the host went away (killed, or stopped): every remote run has ended */
  lost: [];
  /** where the host serves a session's terminal streams, who holds its seat and how many are attached (null: none) */
  seat: [sessionId: string, seat: RemoteSeat | null];
  /** a person typed into a session through a stream the host serves */
  input: [sessionId: string];
  /** a stream the host serves resized the session */
  grid: [sessionId: string, cols: number, rows: number];
};

/** What the host reports of the streams it serves, for the server's sessions to take in. */
export type StreamReports = {
  seat(id: string, seat: RemoteSeat | null): void;
  input(id: string): void;
  grid(id: string, cols: number, rows: number): void;
  snapshot: MirrorSnapshot;
};

/** The server's mirror makes a snapshot the host asked for (a replay of a stream the host serves). */
export type MirrorSnapshot = (sessionId: string, options: { scrollback?: number }) => Promise<{ state: string; gaps: number }>;

/** One program running in the host, as the Session sees a PTY. */
class RemotePty implements PtyProcess {
  pid = 0;
  readonly exited: Promise<PtyExit>;
  readonly ready: Promise<void>;
  private dataListener: ((chunk: Uint8Array) => void) | null = null;
  private lentListener: ((chunk: Uint8Array) => void) | null = null;
  private exitListener: ((exit: PtyExit) => void) | null = null;
  private resolveExit!: (exit: PtyExit) => void;
  private resolveReady!: () => void;
  private rejectReady!: (err: Error) => void;
  private done = false;
  /** output that came before the session listened (an adopted run, between the reply and the mirror) */
  private early: Uint8Array[] = [];

  constructor(
    private readonly link: HostLink,
    readonly ref: number,
  ) {
    this.exited = new Promise((r) => (this.resolveExit = r));
    this.ready = new Promise((resolve, reject) => {
      this.resolveReady = resolve;
      this.rejectReady = reject;
    });
    this.ready.catch(() => {});
  }

  started(pid: number): void {
    this.pid = pid;
    this.resolveReady();
  }

  failed(err: Error): void {
    this.rejectReady(err);
    this.finish({ exitCode: 127, signal: null });
  }

  /** `chunk` is lent (HostSocketOptions.lendOutput): valid only during the call. */
  deliver(chunk: Uint8Array): void {
    if (this.done) return;
    if (this.lentListener) this.lentListener(chunk);
    // Copies (`new Uint8Array`: the lent chunk is a Buffer, whose `slice` is a view).
    else if (this.dataListener) this.dataListener(new Uint8Array(chunk));
    else this.early.push(new Uint8Array(chunk));
  }

  finish(exit: PtyExit): void {
    if (this.done) return;
    this.done = true;
    this.link.forgetRun(this.ref);
    this.exitListener?.(exit);
    this.resolveExit(exit);
  }

  onData(listener: (chunk: Uint8Array) => void): void {
    this.dataListener = listener;
    for (const chunk of this.early.splice(0)) listener(chunk);
  }
  /** The session copies each chunk into its ring and hands on the ring's bytes: no copy here. */
  onLentData(listener: (chunk: Uint8Array) => void): void {
    this.lentListener = listener;
    for (const chunk of this.early.splice(0)) listener(chunk);
  }
  onExit(listener: (exit: PtyExit) => void): void {
    this.exitListener = listener;
  }
  write(data: Uint8Array | string): void {
    if (this.done) return;
    this.link.connection.input(this.ref, 0, typeof data === "string" ? Buffer.from(data) : data);
  }
  async drained(): Promise<void> {
    if (this.done) return;
    await this.link.call("drain", { ref: this.ref });
  }
  /** A submission's bytes with its record, in one frame: the host writes them at most once. */
  async submit(id: string, clientId: string, createdAt: number, bytes: Uint8Array): Promise<"written" | "partial"> {
    const { result } = await this.link.connection.request("submit", { ref: this.ref, id, clientId, createdAt }, bytes);
    // The host wrote it; a server that dies now never tells its clients (what an e2e test makes happen).
    if (HOLD_SUBMIT_ANSWERS) await new Promise<never>(() => {});
    return (result as { state: string }).state === "written" ? "written" : "partial";
  }
  resize(cols: number, rows: number): void {
    this.link.sendQuietly("resize", { ref: this.ref, cols, rows, ptyCols: cols, ptyRows: rows });
  }
  pause(): void {
    this.link.sendQuietly("pause", { ref: this.ref });
  }
  resume(): void {
    this.link.sendQuietly("resume", { ref: this.ref });
  }
  kill(signal: NodeJS.Signals = "SIGHUP"): void {
    if (!this.done) this.link.sendQuietly("signal", { ref: this.ref, signal });
  }
}

export type HostLinkOptions = StartHostOptions & {
  dataDir: string;
  bufferBytes: number;
  log?: (line: string) => void;
};

export class HostLink {
  readonly events = new Emitter<HostLinkEvents>();
  private readonly runs = new Map<number, RemotePty>();
  /** the session of each run, for the host's questions about a run */
  private readonly runSessions = new Map<number, string>();
  /** makes the snapshots the host asks for; none: the host is told it cannot have one */
  mirrorSnapshot: MirrorSnapshot | null = null;
  private nextRef = 1;
  private lost = false;
  /** the channel that hands terminal streams to the host, or null: they are relayed (docs/design.md § The session host serves the streams) */
  private handoff: StreamHandoff | null = null;
  /** handed connections the host serves now: what releases their count here */
  private readonly handed = new Map<string, () => void>();
  /** connections the host served when this server adopted it, until `trackStreams` counts them */
  private adoptedStreams: HandedStreamInfo[] = [];
  /** output and exits that came between the adopt reply and the runs it describes (null once adopted) */
  private beforeAdoption: { ref: number; data?: Uint8Array; exit?: PtyExit }[] | null = [];

  private constructor(
    readonly connection: HostConnection,
    private readonly options: HostLinkOptions,
  ) {
    connection.events.on("output", (ref, _marks, data) => {
      const run = this.runs.get(ref);
      if (run) run.deliver(data);
      // Frames right behind the adopt reply arrive before its promise continues: kept for their run.
      else this.beforeAdoption?.push({ ref, data: new Uint8Array(data) });
    });
    connection.events.on("event", (name, body) => {
      if (name !== "exit") {
        this.hostEvent(name, body);
        return;
      }
      const { ref, exitCode, signal } = body as { ref: number; exitCode: number; signal: number | null };
      const run = this.runs.get(ref);
      if (run) run.finish({ exitCode, signal });
      else this.beforeAdoption?.push({ ref, exit: { exitCode, signal } });
    });
    connection.events.on("closed", () => {
      this.lost = true;
      this.handoff?.close();
      for (const release of this.handed.values()) release();
      this.handed.clear();
      // Sessions are removed first (viewers hear 4404 "deleted", not an exit status), then their runs end.
      this.events.emit("lost");
      for (const run of [...this.runs.values()]) run.finish({ exitCode: 129, signal: 1 });
    });
  }

  /** Connect to the data dir's host (starting one if none runs) and take over what it holds. */
  static async open(options: HostLinkOptions): Promise<{ link: HostLink; adopted: AdoptedRun[] }> {
    const connection = await connectHost(options.dataDir, { role: PeerRole.SERVER, build: WEBMUX_BUILD }, options);
    const link = new HostLink(connection, options);
    const { result, data } = await connection.request("adopt");
    const adopted: AdoptedRun[] = [];
    let at = 0;
    for (const session of (result as { sessions: AdoptedSession[] }).sessions) {
      const run = session.run;
      const length = run ? run.end - run.start : 0;
      const bytes = data.subarray(at, at + length);
      at += length;
      let pty: RemotePty | null = null;
      if (run) {
        link.nextRef = Math.max(link.nextRef, run.ref + 1);
        if (run.status === "running") {
          pty = new RemotePty(link, run.ref);
          pty.started(run.pid);
          link.runs.set(run.ref, pty);
          link.runSessions.set(run.ref, session.id);
        }
      }
      adopted.push({ ...session, bytes, pty });
    }
    link.adoptedStreams = (result as { streams?: HandedStreamInfo[] }).streams ?? [];
    if (!handoffDisabled()) link.handoff = StreamHandoff.open(hostPaths(options.dataDir));
    const early = link.beforeAdoption ?? [];
    link.beforeAdoption = null;
    for (const e of early) {
      const run = link.runs.get(e.ref);
      if (e.data) run?.deliver(e.data);
      else if (e.exit) run?.finish(e.exit);
    }
    return { link, adopted };
  }

  /** An event of the streams the host serves, checked as far as the server uses it. */
  private hostEvent(name: string, body: unknown): void {
    if (typeof body !== "object" || body === null) return;
    const b = body as Record<string, unknown>;
    if (name === "stream-closed" && typeof b.conn === "string") {
      this.handed.get(b.conn)?.();
      this.handed.delete(b.conn);
      this.adoptedStreams = this.adoptedStreams.filter((s) => s.conn !== b.conn);
      return;
    }
    if (name === "snapshot" && Number.isInteger(b.req)) {
      this.answerSnapshot(b.req as number, b.ref, typeof b.scrollback === "number" ? b.scrollback : undefined);
      return;
    }
    if (typeof b.id !== "string") return;
    if (name === "seat" && Number.isInteger(b.clients)) {
      this.events.emit("seat", b.id, (b.clients as number) > 0 ? { controller: (b.controller as RemoteSeat["controller"]) ?? null, clients: b.clients as number } : null);
    } else if (name === "input") this.events.emit("input", b.id);
    else if (name === "grid" && Number.isInteger(b.cols) && Number.isInteger(b.rows)) this.events.emit("grid", b.id, b.cols as number, b.rows as number);
  }

  /**
   * The host asks the mirror of run `ref` for a snapshot; asked now, while every OUTPUT frame before
   * the question has been taken and none after it, so the snapshot is the state as of the host's
   * replay position.
   */
  private answerSnapshot(req: number, ref: unknown, scrollback: number | undefined): void {
    const sessionId = typeof ref === "number" && this.runs.has(ref) ? this.runSessions.get(ref) : undefined;
    const make = this.mirrorSnapshot;
    const made = sessionId !== undefined && make ? make(sessionId, scrollback === undefined ? {} : { scrollback }) : Promise.reject(new Error(`no mirror of run ${String(ref)}`));
    made.then(
      ({ state, gaps }) => this.sendQuietly("snapshot", { req, gaps }, Buffer.from(state, "utf8")),
      (err: Error) => this.sendQuietly("snapshot", { req, error: err.message || "no snapshot" }),
    );
  }

  /** Whether terminal streams can be handed to this host now. */
  get handsStreams(): boolean {
    return !this.lost && this.handoff !== null && this.handoff.open;
  }

  /**
   * Hand an authorised upgrade of a session's terminal stream to the host (docs/design.md § The
   * session host serves the streams): true when the host took it. It counts against `acceptor`'s
   * limits and closes when its principal may no longer act, as the server's own sockets do.
   */
  handStream(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL, principal: Principal, sessionId: string, acceptor: WebSocketAcceptor): boolean {
    if (!this.handsStreams) return false;
    const address = connectionAddress(req.socket.remoteAddress);
    if (acceptor.refusal(address) !== null) return false; // refused with 429 by the server's own path
    const conn = this.handoff!.hand(req, socket, head, url, principal, sessionId, address, acceptor.expiresAt(principal));
    if (conn === null) return false;
    this.track(conn, address, principal, acceptor);
    return true;
  }

  /** The session is being deleted: the streams the host serves of it close with 4404 (before its program ends). */
  closeSessionStreams(sessionId: string): void {
    if (this.handoff) this.sendQuietly("close-streams", { session: sessionId });
  }

  /** Count and check the connections the host served when this server adopted it (a server restart does not drop them). */
  trackAdoptedStreams(acceptor: WebSocketAcceptor): void {
    for (const s of this.adoptedStreams.splice(0)) this.track(s.conn, s.address, principalOf(s.principal), acceptor);
  }

  private track(conn: string, address: string, principal: Principal, acceptor: WebSocketAcceptor): void {
    // (a stream that closed before this runs is released by its stream-closed event: that comes later, on the same socket)
    this.handed.set(conn, acceptor.trackExternal(address, principal, (code, reason) => this.sendQuietly("close-streams", { conns: [conn], code, reason })));
  }

  get hostPid(): number {
    return this.connection.welcome.pid;
  }

  get isLost(): boolean {
    return this.lost;
  }

  /** The SpawnPty of every session of this server: the program starts in the host. */
  readonly spawnPty: SpawnPty = (spawn: PtySpawnOptions): PtyProcess => {
    // Checked here first, so a bad command fails at once with the same error as in-process.
    assertSpawnable(spawn);
    const label = spawn.label;
    if (!label) throw new PtySpawnError("PTY_SPAWN_FAILED", "a session host run needs its session");
    if (this.lost) throw new PtySpawnError("PTY_SPAWN_FAILED", "the session host is gone");
    const ref = this.nextRef++;
    const pty = new RemotePty(this, ref);
    this.runs.set(ref, pty);
    this.runSessions.set(ref, label.sessionId);
    const { label: _label, ...options } = spawn;
    const meta: HostedSessionMeta = { id: label.sessionId, cwd: spawn.cwd, command: label.command, env: label.env, createdAt: label.createdAt, title: label.title, hybrid: label.hybrid };
    this.connection
      .request("spawn", { ref, generation: label.generation, bufferBytes: this.options.bufferBytes, spawn: options, meta })
      .then(
        ({ result }) => pty.started((result as { pid: number }).pid),
        (err: Error) => {
          const code = err instanceof HostCallError ? (err.code as PtyErrorCode) : "PTY_SPAWN_FAILED";
          pty.failed(new PtySpawnError(code, err.message));
        },
      );
    return pty;
  };

  /** The user renamed a session: the host keeps the title for the next server. */
  setTitle(sessionId: string, title: string | null): void {
    this.sendQuietly("meta", { id: sessionId, title });
  }

  /** A hybrid session's conversation state changed: the host keeps it for the next server (and starts the session's record when it has no run yet). */
  setHybrid(meta: HostedSessionMeta, cols: number, rows: number, state: Record<string, unknown>): void {
    this.sendQuietly("hybrid", { meta, cols, rows, state });
  }

  /** The session was deleted: the host forgets it (its program has been ended already). */
  forget(sessionId: string): void {
    this.sendQuietly("forget", { id: sessionId });
  }

  forgetRun(ref: number): void {
    this.runs.delete(ref);
    this.runSessions.delete(ref);
  }

  async call(method: string, params: unknown): Promise<unknown> {
    if (this.lost) return null;
    try {
      return (await this.connection.request(method, params)).result;
    } catch {
      return null; // the run ended or the host went away: the exit event says so
    }
  }

  /** A request whose answer nobody waits for. */
  sendQuietly(method: string, params: unknown, data?: Uint8Array): void {
    if (this.lost) return;
    this.connection.request(method, params, data).catch((err: Error) => {
      if (err instanceof HostCallError && err.code !== "NOT_FOUND") this.options.log?.(`session host: ${method} failed: ${err.message}`);
    });
  }

  close(): void {
    this.handoff?.close();
    this.connection.close();
  }
}

export type { HostedSubmission };

/**
 * The server's hold on its session host across the host's own death: the current link, and a new
 * host (started on demand) for the next session once a killed host took its sessions with it.
 */
export class HostBinding {
  private link: HostLink | null = null;
  private opening: Promise<AdoptedRun[]> | null = null;

  /** where handed streams are counted and what their reports update, once `serveStreams` was called */
  private streams: { acceptor: WebSocketAcceptor; sessions: StreamReports } | null = null;

  constructor(private readonly options: HostLinkOptions & { onLost: () => void }) {}

  /**
   * Hand terminal streams to the host from now on, counted and checked by `acceptor`; the host's
   * reports of them go to the sessions (docs/design.md § The session host serves the streams).
   */
  serveStreams(acceptor: WebSocketAcceptor, sessions: StreamReports): void {
    this.streams = { acceptor, sessions };
    if (this.link) this.followStreams(this.link);
  }

  /** The link's handed streams are counted here and its reports reach the sessions. */
  private followStreams(link: HostLink): void {
    const streams = this.streams;
    if (!streams) return;
    link.mirrorSnapshot = streams.sessions.snapshot;
    link.trackAdoptedStreams(streams.acceptor);
  }

  closeSessionStreams(sessionId: string): void {
    this.link?.closeSessionStreams(sessionId);
  }

  /** Hand an authorised terminal upgrade to the host: true when it took it. */
  handStream(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL, principal: Principal, sessionId: string): boolean {
    const link = this.link;
    if (!link || !this.streams) return false;
    return link.handStream(req, socket, head, url, principal, sessionId, this.streams.acceptor);
  }

  get current(): HostLink | null {
    return this.link;
  }

  /** Connect to the data dir's host, starting one if none runs; what it holds is handed over. */
  open(): Promise<AdoptedRun[]> {
    this.opening ??= (async () => {
      try {
        const { link, adopted } = await HostLink.open(this.options);
        link.events.on("seat", (id, seat) => this.streams?.sessions.seat(id, seat));
        link.events.on("input", (id) => this.streams?.sessions.input(id));
        link.events.on("grid", (id, cols, rows) => this.streams?.sessions.grid(id, cols, rows));
        this.followStreams(link);
        link.events.on("lost", () => {
          this.options.log?.(`webmux: the session host (pid ${link.hostPid}) went away; its sessions ended with it`);
          this.options.onLost();
        });
        this.link = link;
        return adopted;
      } finally {
        this.opening = null;
      }
    })();
    return this.opening;
  }

  /** Before a session is created: a host that died is replaced by a new one (it holds nothing yet). */
  async ensure(): Promise<AdoptedRun[]> {
    if (this.link && !this.link.isLost) return [];
    return await this.open();
  }

  readonly spawnPty: SpawnPty = (spawn) => {
    const link = this.link;
    if (!link || link.isLost) throw new PtySpawnError("PTY_SPAWN_FAILED", "the session host went away; a new one starts with the next session");
    return link.spawnPty(spawn);
  };

  setTitle(sessionId: string, title: string | null): void {
    this.link?.setTitle(sessionId, title);
  }

  setHybrid(meta: HostedSessionMeta, cols: number, rows: number, state: Record<string, unknown>): void {
    this.link?.setHybrid(meta, cols, rows, state);
  }

  forget(sessionId: string): void {
    this.link?.forget(sessionId);
  }

  close(): void {
    this.link?.close();
  }
}
