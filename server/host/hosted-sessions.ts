/**
 * What the session host holds (docs/design.md, What survives a restart): every session's PTY and
 * what a server needs to take the session over after a restart — the replay ring with its
 * offsets, the generation, the terminal modes (a scanner over the output), the grid, the title,
 * and the submissions written into it. The server keeps a mirror of each session (its own ring,
 * screen and hub); this is the copy that outlives it.
 */
import type { PtyExit, PtyHandover, PtyProcess, PtySpawnOptions, SpawnPty } from "../pty/pty.ts";
import { PtySpawnError } from "../pty/pty.ts";
import type { AdoptedPty } from "../pty/adopted-pty.ts";
import { terminate, TERMINATE_GRACE_MS } from "../pty/terminate.ts";
import { RingBuffer } from "../session/ring-buffer.ts";
import { keepAppended, Session } from "../session/session.ts";
import { CloseCode } from "../contract/protocol.ts";
import { CLOSE_GOING_AWAY, HostedStreams, RemoteScreen, type HandedStreamInfo, type RemoteSnapshot, type StreamSource } from "./hosted-streams.ts";
import type { RemoteSeat } from "../session/session.ts";
import { TerminalScanner, type ScanEvent } from "../vt/terminal-scanner.ts";
import { FIRST_HANDED_FD, type HandedSession, type HandoverDocument } from "./handover.ts";
import { encodeOutputFrameParts, PeerRole } from "./protocol.ts";
import { SHELL_NONCE_VARIABLE, ShellMarks, type ShellState } from "./shell-marks.ts";
import { HostRequestError, type HostPeer, type HostReply, type HostService } from "./session-host.ts";

/**
 * Output queued for the server beyond this pauses every PTY until the socket drains: a slow or
 * stalled server must not make the host buffer without bound (the rings keep what it missed).
 */
export const HOST_OUTPUT_HIGH_WATER_BYTES = 4 * 1024 * 1024;
/**
 * While the host serves a run's terminal streams itself, its output reaches the server's mirror in
 * batches of up to this long: no client waits on the mirror, and one frame per batch instead of one
 * per PTY read saves both processes a write, a wake-up and a decode per read (docs/design.md § The
 * session host serves the streams).
 */
export const MIRROR_BATCH_MS = 5;
/** …or of this many bytes, whichever comes first. */
export const MIRROR_BATCH_BYTES = 256 * 1024;
/** A snapshot the server's mirror has not made within this long is given up: the replay falls back (raw, or modes and a redraw). */
export const REMOTE_SNAPSHOT_TIMEOUT_MS = 15_000;
/** A handover waits this long for a program that is ending to be gone, rather than hand over its last moments. */
const HANDOVER_EXIT_WAIT_MS = 3_000;
/** Submission records kept per session (as many as the server's own log keeps). */
const SUBMISSIONS_KEPT = 256;
/** A submission record older than this is dropped (the server's log forgets it then too). */
const SUBMISSION_KEPT_MS = 30 * 60 * 1000;
/** A hybrid session's record (ids, end, state: a few hundred bytes) is at most this long as JSON. */
const MAX_HYBRID_RECORD_BYTES = 64 * 1024;

/** How a session describes itself to a server that takes it over. */
export type HostedSessionMeta = {
  id: string;
  /** the command the session was created with (a run may have started another one) */
  command: string[];
  cwd: string;
  env: Record<string, string>;
  createdAt: number;
  /** the title a user gave it, or null */
  title: string | null;
  hybrid: boolean;
};

/** One run of a session's program. */
type HostedRun = {
  ref: number;
  generation: string;
  pty: PtyProcess;
  ring: RingBuffer;
  scanner: TerminalScanner;
  status: "running" | "exited";
  exitCode: number | null;
  /** the server asked to stop reading (its clients are slow) */
  pausedByServer: boolean;
  /** a shell started with integration: where its marks say it is */
  shell: ShellMarks | null;
  /** the PTY's own size (the session's grid may differ) */
  ptyCols: number;
  ptyRows: number;
  /** a stream the host serves asked to stop reading (its controller is slow) */
  pausedByStream: boolean;
  /** the Session that serves the run's streams here, fed after the ring (docs/design.md § The session host serves the streams) */
  tap: RunTap | null;
  /** output not sent to the server's mirror yet (a batch, while `tap` serves the streams) */
  mirror: Uint8Array[];
  mirrorBytes: number;
  mirrorTimer: ReturnType<typeof setTimeout> | null;
  /** the scanner's events for the chunk read last (a streamed Session shares the scanner and ring) */
  lastEvents: readonly ScanEvent[];
};

/** The feed of a streamed Session: the run's output after it is in the ring, then its exit. */
type RunTap = { data(chunk: Uint8Array): void; exit(exit: PtyExit): void };

/** A run's state that starts the same whether it was spawned here or handed over: nothing paused, streamed or batched. */
function idleRunState(): Pick<HostedRun, "pausedByServer" | "pausedByStream" | "tap" | "mirror" | "mirrorBytes" | "mirrorTimer" | "lastEvents"> {
  return { pausedByServer: false, pausedByStream: false, tap: null, mirror: [], mirrorBytes: 0, mirrorTimer: null, lastEvents: [] };
}

/** The handover could not be prepared; nothing was changed. */
export class HandoverError extends Error {}

/** A handover ready to go: the document and its descriptors, to be released once the successor has them. */
export type PreparedHandover = {
  document: Omit<HandoverDocument, "from">;
  bytes: Uint8Array;
  /** this process's descriptors, in the order the successor inherits them from FIRST_HANDED_FD */
  fds: number[];
  /** the programs the successor now holds, whose exits this process goes on waiting for */
  programs: PtyProcess[];
  /** the successor took them: close the copies here */
  release(): void;
  /** the successor failed: go on reading here */
  abort(): void;
};

export type HostedSubmission = { id: string; clientId: string; createdAt: number; state: "received" | "written" | "partial" };

type HostedSession = {
  meta: HostedSessionMeta;
  cols: number;
  rows: number;
  run: HostedRun | null;
  submissions: Map<string, HostedSubmission>;
  /** a hybrid session's conversation state, as the server last gave it (opaque to the host) */
  hybrid: Record<string, unknown> | null;
};

/** One session as `adopt` and `list` describe it; its ring's bytes travel in the reply's data. */
export type AdoptedSession = HostedSessionMeta & {
  cols: number;
  rows: number;
  run: {
    ref: number;
    generation: string;
    pid: number;
    status: "running" | "exited";
    exitCode: number | null;
    /** ring offsets: bytes [start, end) follow in the reply's data, after the previous sessions' */
    start: number;
    end: number;
    /** restores the terminal modes that output before `start` set */
    modes: string;
    /** a shell with integration: its nonce and whether a command runs (absent from hosts before it was kept) */
    shell?: ShellState | null;
  } | null;
  /** the seat where the host serves the session's terminal streams (absent: it serves none) */
  seat?: RemoteSeat | null;
  submissions: HostedSubmission[];
  /** a hybrid session's conversation state, as the server last gave it; null for other sessions */
  hybridState?: unknown;
};

export type SpawnParams = {
  ref: number;
  generation: string;
  bufferBytes: number;
  spawn: PtySpawnOptions;
  meta: HostedSessionMeta;
};

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function param<T>(params: unknown, name: string, check: (v: unknown) => v is T): T {
  const value = isRecord(params) ? params[name] : undefined;
  if (!check(value)) throw new HostRequestError("BAD_REQUEST", `bad or missing ${name}`);
  return value;
}

const isRef = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 0xffffffff;
const isString = (v: unknown): v is string => typeof v === "string";
const isSize = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 10_000;
const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every(isString);
const isEnv = (v: unknown): v is Record<string, string> => isRecord(v) && Object.values(v).every(isString);
const isSpawnOptions = (v: unknown): v is PtySpawnOptions =>
  isRecord(v) && isStrings(v.command) && v.command.length > 0 && isString(v.cwd) && isEnv(v.env) && isSize(v.cols) && isSize(v.rows);
const isMeta = (v: unknown): v is HostedSessionMeta =>
  isRecord(v) &&
  isString(v.id) &&
  /^[a-z0-9]{8}$/.test(v.id) &&
  isStrings(v.command) &&
  isString(v.cwd) &&
  isEnv(v.env) &&
  Number.isFinite(v.createdAt) &&
  (v.title === null || isString(v.title)) &&
  typeof v.hybrid === "boolean";

export class HostedSessions implements HostService {
  private readonly sessions = new Map<string, HostedSession>();
  private readonly runs = new Map<number, { session: HostedSession; run: HostedRun }>();
  /** the server that adopted the sessions: it gets their output */
  private server: HostPeer | null = null;
  private pausedByQueue = false;
  /** runs this host took over from its predecessor, by pid: their exits come from it (`reaped`) */
  private readonly adoptedPtys = new Map<number, AdoptedPty>();
  /** called after anything that may let the host exit (a run ended, a session was forgotten) */
  onChange: () => void = () => {};
  /** the terminal streams this host serves, once `serveStreams` was called */
  private streams: HostedStreams | null = null;
  /** snapshots asked of the server's mirror, by request number */
  private readonly snapshots = new Map<number, { resolve: (s: RemoteSnapshot) => void; reject: (err: Error) => void; timer: ReturnType<typeof setTimeout> }>();
  private nextSnapshot = 1;

  constructor(
    private readonly spawnPty: SpawnPty,
    private readonly log: (line: string) => void = () => {},
  ) {}

  /**
   * Serve handed terminal streams from the channel at `path` (docs/design.md § The session host
   * serves the streams); `secret` is the host's, which the server presents first.
   */
  serveStreams(path: string, secret: () => string | null): void {
    const source: StreamSource = {
      currentRef: (id) => {
        const s = this.sessions.get(id);
        return s?.run && s.hybrid === null && !s.meta.hybrid ? s.run.ref : null;
      },
      openSession: (ref) => this.openStreamSession(ref),
      gridChanged: (id, cols, rows) => {
        const s = this.sessions.get(id);
        if (!s || (s.cols === cols && s.rows === rows)) return;
        s.cols = cols;
        s.rows = rows;
        // The mirror's screen must take the bytes printed before the resize at the old size.
        if (s.run) this.flushMirror(s.run);
        this.server?.emit("grid", { id, cols, rows });
      },
      emit: (name, body) => this.server?.emit(name, body),
    };
    this.streams = new HostedStreams(source, secret, this.log);
    this.streams.listen(path);
  }

  /** Stop taking handed streams and close the ones served (the host exits). */
  stopStreams(): void {
    this.streams?.stopListening();
    this.streams?.closeAll(CLOSE_GOING_AWAY, "session host exiting");
  }

  /** The handed terminal streams served now, for a server that adopts the sessions. */
  handedStreams(): HandedStreamInfo[] {
    return this.streams?.list() ?? [];
  }

  /** A Session of this process following run `ref`: what its streams are served from. */
  private openStreamSession(ref: number): { session: Session; close(): void } | null {
    const found = this.runs.get(ref);
    if (!found || found.run.tap) return null;
    const { session: hosted, run } = found;
    const running = run.status === "running";
    let dataListener: ((chunk: Uint8Array) => void) | null = null;
    let exitListener: ((exit: PtyExit) => void) | null = null;
    const pty: PtyProcess = {
      pid: run.pty.pid,
      exited: run.pty.exited,
      onData: (l) => (dataListener = l),
      onExit: (l) => (exitListener = l),
      write: (data) => {
        if (run.status === "running") run.pty.write(data);
      },
      drained: () => run.pty.drained(),
      resize: (cols, rows) => {
        if (run.status !== "running") return;
        run.ptyCols = cols;
        run.ptyRows = rows;
        run.pty.resize(cols, rows);
      },
      pause: () => {
        run.pausedByStream = true;
        this.applyPauseOf(run);
      },
      resume: () => {
        run.pausedByStream = false;
        this.applyPauseOf(run);
      },
      kill: (signal) => run.pty.kill(signal),
      submit: (id, clientId, createdAt, bytes) => this.submitOnce(hosted, run, id, clientId, createdAt, bytes),
    };
    const session = new Session({
      id: hosted.meta.id,
      command: hosted.meta.command,
      cwd: hosted.meta.cwd,
      env: hosted.meta.env,
      cols: hosted.cols,
      rows: hosted.rows,
      ...(hosted.meta.title ? { title: hosted.meta.title } : {}),
      bufferBytes: run.ring.capacity,
      // The run's own ring and scanner: no copy of up to a ring's bytes per streamed session.
      shared: { ring: run.ring, scanner: run.scanner, lastEvents: () => run.lastEvents },
      makeScreen: () => new RemoteScreen((options) => this.snapshotOnServer(run, options)),
      spawnPty: () => {
        throw new PtySpawnError("PTY_SPAWN_FAILED", "a streamed session follows the host's run; it starts none");
      },
      nextGeneration: () => run.generation,
      adopt: {
        createdAt: hosted.meta.createdAt,
        generation: run.generation,
        start: run.ring.start,
        bytes: new Uint8Array(0),
        modes: run.scanner.restoreSequence(),
        pty: running ? pty : null,
        exitCode: run.exitCode,
        submissions: [...hosted.submissions.values()],
      },
    });
    if (running) {
      run.tap = {
        data: (chunk) => dataListener?.(chunk),
        exit: (exit) => exitListener?.(exit),
      };
    }
    return {
      session,
      close: () => {
        if (run.tap) run.tap = null;
        if (run.pausedByStream) {
          run.pausedByStream = false;
          this.applyPauseOf(run);
        }
      },
    };
  }

  /**
   * A snapshot of run `run` from the server's mirror, as of every byte read so far: the mirror's
   * batch goes first, and the request follows it on the same socket.
   */
  private snapshotOnServer(run: HostedRun, options?: { scrollback?: number }): Promise<RemoteSnapshot> {
    const server = this.server;
    if (!server) return Promise.reject(new Error("no server is connected to make the snapshot"));
    this.flushMirror(run);
    const req = this.nextSnapshot++;
    return new Promise<RemoteSnapshot>((resolve, reject) => {
      const timer = setTimeout(() => this.settleSnapshot(req, new Error("the server made no snapshot in time")), REMOTE_SNAPSHOT_TIMEOUT_MS);
      timer.unref?.();
      this.snapshots.set(req, { resolve, reject, timer });
      server.emit("snapshot", { req, ref: run.ref, ...(options?.scrollback !== undefined ? { scrollback: options.scrollback } : {}) });
    });
  }

  private settleSnapshot(req: number, answer: RemoteSnapshot | Error): void {
    const waiting = this.snapshots.get(req);
    if (!waiting) return;
    this.snapshots.delete(req);
    clearTimeout(waiting.timer);
    if (answer instanceof Error) waiting.reject(answer);
    else waiting.resolve(answer);
  }

  sessionCount(): number {
    return this.sessions.size;
  }

  runningCount(): number {
    let n = 0;
    for (const s of this.sessions.values()) if (s.run?.status === "running") n++;
    return n;
  }

  /** A program runs, or a hybrid conversation is kept (it may be parked at its chat end, with no program). */
  holdsWork(): boolean {
    if (this.runningCount() > 0) return true;
    for (const s of this.sessions.values()) if (s.hybrid !== null) return true;
    return false;
  }

  peerJoined(): void {}

  peerLeft(peer: HostPeer): void {
    if (peer !== this.server) return;
    this.server = null;
    this.dropMirrorBatches();
    for (const req of [...this.snapshots.keys()]) this.settleSnapshot(req, new Error("the server went away"));
    // Nobody reads now: the rings keep the output, and nothing is waiting on a socket any more.
    // Pauses the server asked for end with it (its slow clients are gone; the next server decides anew).
    this.pausedByQueue = false;
    for (const { run } of this.runs.values()) run.pausedByServer = false;
    this.applyPause();
  }

  input(peer: HostPeer, ref: number, _flags: number, data: Uint8Array): void {
    if (peer !== this.server) return;
    const found = this.runs.get(ref);
    if (found && found.run.status === "running") found.run.pty.write(data);
  }

  handle(peer: HostPeer, method: string, params: unknown, data: Uint8Array): HostReply | Promise<HostReply> {
    if (method === "list") return this.describe(false);
    if (peer.role !== PeerRole.SERVER) throw new HostRequestError("NOT_ALLOWED", `${method} is for the server`);
    switch (method) {
      case "adopt":
        return this.adopt(peer);
      case "spawn":
        return this.spawn(params);
      case "resize": {
        const { session, run } = this.requireRun(params);
        session.cols = param(params, "cols", isSize);
        session.rows = param(params, "rows", isSize);
        if (run.status === "running") {
          run.ptyCols = param(params, "ptyCols", isSize);
          run.ptyRows = param(params, "ptyRows", isSize);
          run.pty.resize(run.ptyCols, run.ptyRows);
        }
        this.streams?.followResize(session.meta.id, session.cols, session.rows);
        return { result: null };
      }
      case "pause":
      case "resume": {
        const { run } = this.requireRun(params);
        run.pausedByServer = method === "pause";
        this.applyPauseOf(run);
        return { result: null };
      }
      case "signal": {
        const { run } = this.requireRun(params);
        const signal = param(params, "signal", isString);
        if (!/^SIG[A-Z0-9]+$/.test(signal)) throw new HostRequestError("BAD_REQUEST", `bad signal ${signal}`);
        if (run.status === "running") run.pty.kill(signal as NodeJS.Signals);
        return { result: null };
      }
      case "drain":
        return this.drain(params);
      case "submit":
        return this.submit(params, data);
      case "hybrid":
        return this.setHybrid(params);
      case "meta": {
        const session = this.requireSession(params);
        const title = isRecord(params) ? params.title : undefined;
        if (title === null || typeof title === "string") {
          session.meta.title = title;
          this.streams?.setTitle(session.meta.id, title);
        }
        return { result: null };
      }
      case "snapshot": {
        // The server's answer to a snapshot this host asked its mirror for: the state in `data`, or why not.
        const req = param(params, "req", isRef);
        const error = isRecord(params) ? params.error : undefined;
        if (typeof error === "string") this.settleSnapshot(req, new Error(error.slice(0, 200)));
        else this.settleSnapshot(req, { state: new TextDecoder().decode(data), gaps: param(params, "gaps", isRef) });
        return { result: null };
      }
      case "close-streams": {
        // A session being deleted: its streams close with 4404 before its program is ended (then they would hear 4410).
        if (isRecord(params) && params.session !== undefined) {
          this.streams?.closeSession(param(params, "session", isString), CloseCode.NOT_FOUND, "session deleted");
          return { result: null };
        }
        // Connections whose credential no longer holds: 1008 with the server's reason.
        const conns = param(params, "conns", isStrings);
        const code = param(params, "code", (v): v is number => v === CloseCode.POLICY);
        this.streams?.closeConnections(conns, code, param(params, "reason", isString).slice(0, 120));
        return { result: null };
      }
      case "forget": {
        const session = this.requireSession(params);
        this.streams?.closeSession(session.meta.id, CloseCode.NOT_FOUND, "session deleted");
        this.sessions.delete(session.meta.id);
        if (session.run) this.runs.delete(session.run.ref);
        if (session.run?.status === "running") void terminate(session.run.pty);
        this.onChange();
        return { result: null };
      }
      default:
        throw new HostRequestError("UNKNOWN_METHOD", `unknown method ${method}`);
    }
  }

  /** `webmux stop`: every program gets SIGHUP, and SIGKILL after the grace. */
  async endAll(): Promise<number> {
    const all = [...this.sessions.values()];
    await Promise.all(all.map((s) => (s.run?.status === "running" ? terminate(s.run.pty, TERMINATE_GRACE_MS) : null)));
    this.sessions.clear();
    this.runs.clear();
    return all.length;
  }

  /** The server takes the sessions over: their state now, then their output as it comes. */
  private adopt(peer: HostPeer): HostReply {
    this.server = peer;
    const reply = this.describe(true);
    this.applyPause();
    return reply;
  }

  private describe(withBytes: boolean): HostReply {
    const sessions: AdoptedSession[] = [];
    const chunks: Uint8Array[] = [];
    for (const s of this.sessions.values()) {
      const run = s.run;
      sessions.push({
        ...s.meta,
        ...(withBytes ? {} : { env: {} }),
        cols: s.cols,
        rows: s.rows,
        run: run
          ? {
              ref: run.ref,
              generation: run.generation,
              pid: run.pty.pid,
              status: run.status,
              exitCode: run.exitCode,
              start: withBytes ? run.ring.start : run.ring.end,
              end: run.ring.end,
              modes: run.scanner.restoreSequence(),
              shell: withBytes ? (run.shell?.state ?? null) : null,
            }
          : null,
        submissions: [...s.submissions.values()],
        hybridState: withBytes ? s.hybrid : null,
        seat: this.streams?.seat(s.meta.id) ?? null,
      });
      if (withBytes && run) chunks.push(run.ring.slice(run.ring.start, run.ring.end));
    }
    return { result: { sessions, ...(withBytes ? { streams: this.handedStreams() } : {}) }, data: withBytes ? Buffer.concat(chunks) : new Uint8Array(0) };
  }

  private spawn(params: unknown): HostReply {
    const ref = param(params, "ref", isRef);
    const generation = param(params, "generation", isString);
    const bufferBytes = param(params, "bufferBytes", (v): v is number => Number.isSafeInteger(v) && (v as number) > 0);
    const spawn = param(params, "spawn", isSpawnOptions);
    const meta = param(params, "meta", isMeta);
    if (this.runs.has(ref)) throw new HostRequestError("BAD_REQUEST", `run ${ref} exists`);
    let session = this.sessions.get(meta.id);
    if (session?.run?.status === "running") throw new HostRequestError("BAD_REQUEST", `session ${meta.id} is running`);
    let pty: PtyProcess;
    try {
      pty = this.spawnPty(spawn);
    } catch (err) {
      if (err instanceof PtySpawnError) throw new HostRequestError(err.code, err.message);
      throw err;
    }
    if (!session) {
      session = { meta, cols: spawn.cols, rows: spawn.rows, run: null, submissions: new Map(), hybrid: null };
      this.sessions.set(meta.id, session);
    }
    if (session.run) this.runs.delete(session.run.ref);
    const nonce = spawn.env[SHELL_NONCE_VARIABLE];
    const run: HostedRun = {
      ref,
      generation,
      pty,
      ring: new RingBuffer(bufferBytes),
      scanner: new TerminalScanner(),
      status: "running",
      exitCode: null,
      ptyCols: spawn.cols,
      ptyRows: spawn.rows,
      shell: nonce ? new ShellMarks(nonce) : null,
      ...idleRunState(),
    };
    session.run = run;
    this.runs.set(ref, { session, run });
    this.listen(session, run);
    return { result: { pid: pty.pid } };
  }

  /** A running run's output into its ring (and to the server), its exit into its state. */
  private listen(session: HostedSession, run: HostedRun): void {
    const { ref, pty, shell } = run;
    const onRead = (read: Uint8Array, lent: boolean) => {
      run.ring.append(read);
      // A lent read is the PTY's read buffer, reused for the next read: from here on the ring's copy
      // serves (docs/design.md § The path of an output byte), and whoever keeps it past this turn
      // copies it — the stream's hub until its next flush is within OUTPUT_CHUNK_LIFETIME_BYTES, and
      // so is the mirror's batch; the host socket copies what it cannot send at once.
      const chunk = lent ? keepAppended(run.ring, read) : read;
      const events = run.scanner.feed(chunk);
      run.lastEvents = events;
      if (shell && events.length > 0) shell.follow(events);
      // The streams served here first: the echo leaves before the server's copy.
      const server = this.server;
      if (run.tap) {
        run.tap.data(chunk);
        if (server) this.batchForMirror(run, chunk);
        return;
      }
      if (!server) return;
      this.flushMirror(run);
      this.sendOutput(server, ref, chunk);
    };
    if (pty.onLentData) pty.onLentData((chunk) => onRead(chunk, true));
    else pty.onData((chunk) => onRead(chunk, false));
    pty.onExit((exit) => {
      run.status = "exited";
      run.exitCode = exit.exitCode;
      this.adoptedPtys.delete(pty.pid);
      run.tap?.exit(exit);
      // Every byte before the exit, then the exit.
      this.flushMirror(run);
      this.server?.emit("exit", { ref, exitCode: exit.exitCode, signal: exit.signal });
      this.log(`session ${session.meta.id} run ${ref} exited with ${exit.exitCode}`);
      this.onChange();
    });
    this.applyPauseOf(run);
  }

  private sendOutput(server: HostPeer, ref: number, data: Uint8Array): void {
    server.socket.sendTransient(encodeOutputFrameParts(ref, [data]));
    this.checkQueue(server);
  }

  /** Output queued for the server past the high-water mark pauses every PTY until it drains. */
  private checkQueue(server: HostPeer): void {
    if (!this.pausedByQueue && server.socket.queuedBytes > HOST_OUTPUT_HIGH_WATER_BYTES) this.pauseForQueue(server);
  }

  private batchForMirror(run: HostedRun, chunk: Uint8Array): void {
    run.mirror.push(chunk);
    run.mirrorBytes += chunk.length;
    if (run.mirrorBytes >= MIRROR_BATCH_BYTES) this.flushMirror(run);
    else if (!run.mirrorTimer) {
      run.mirrorTimer = setTimeout(() => this.flushMirror(run), MIRROR_BATCH_MS);
      run.mirrorTimer.unref?.();
    }
  }

  /** Send the run's batch to the server's mirror now (before anything that must follow its bytes). */
  private flushMirror(run: HostedRun): void {
    const chunks = this.takeMirrorBatch(run);
    const server = this.server;
    if (chunks.length === 0 || !server) return;
    // One frame, sent from the ring's memory: no join, and a copy only of what the kernel does not take at once.
    server.socket.sendTransient(encodeOutputFrameParts(run.ref, chunks));
    this.checkQueue(server);
  }

  /** The run's batch, taken out (its timer stopped). */
  private takeMirrorBatch(run: HostedRun): Uint8Array[] {
    if (run.mirrorTimer) clearTimeout(run.mirrorTimer);
    run.mirrorTimer = null;
    const chunks = run.mirror;
    run.mirror = [];
    run.mirrorBytes = 0;
    return chunks;
  }

  /** The server went away: its batches with it (the next server adopts the rings, which hold every byte). */
  private dropMirrorBatches(): void {
    for (const { run } of this.runs.values()) this.takeMirrorBatch(run);
  }

  /**
   * Hand every session over to a successor host (docs/design.md, What survives a restart): each
   * running PTY stops reading with all it read in the ring, and gives out its master descriptor.
   * Throws HandoverError (and changes nothing) when a PTY cannot be handed over.
   */
  async prepareHandover(): Promise<PreparedHandover> {
    if (this.server) throw new HandoverError("a server is connected");
    // The streams served here do not go over: their clients reconnect to the successor and resume with `append`.
    this.streams?.closeAll(CLOSE_GOING_AWAY, "session host handing over");
    const handed: PtyHandover[] = [];
    const abort = () => {
      for (const h of handed) h.abort();
      this.applyPause();
      this.streams?.relisten();
    };
    const sessions: HandedSession[] = [];
    const chunks: Uint8Array[] = [];
    const fds: number[] = [];
    const programs: PtyProcess[] = [];
    try {
      for (const s of this.sessions.values()) {
        const run = s.run;
        let handover: PtyHandover | null = null;
        if (run?.status === "running") {
          if (!run.pty.handover) throw new HandoverError(process.versions.bun ? "its PTYs run on Bun's terminal API, which does not give out a terminal's descriptor" : "its PTYs cannot give out their descriptors");
          handover = await run.pty.handover();
          if (!handover) {
            // Ending right now: its exit is on its way, and it goes over as an exited run.
            let timer: ReturnType<typeof setTimeout> | undefined;
            await Promise.race([run.pty.exited, new Promise((r) => (timer = setTimeout(r, HANDOVER_EXIT_WAIT_MS)))]);
            clearTimeout(timer);
            if (run.status === "running") throw new HandoverError(`session ${s.meta.id} neither hands over nor ends`);
          } else {
            handed.push(handover);
            programs.push(run.pty);
            fds.push(handover.fd);
          }
        }
        sessions.push({
          meta: s.meta,
          cols: s.cols,
          rows: s.rows,
          submissions: [...s.submissions.values()],
          hybrid: s.hybrid,
          run: run
            ? {
                ref: run.ref,
                generation: run.generation,
                pid: run.pty.pid,
                status: handover ? "running" : "exited",
                exitCode: handover ? null : run.exitCode,
                bufferBytes: run.ring.capacity,
                start: run.ring.start,
                end: run.ring.end,
                modes: run.scanner.restoreSequence(),
                fd: handover ? FIRST_HANDED_FD + fds.length - 1 : null,
                ptsName: handover?.ptsName ?? null,
                ptyCols: run.ptyCols,
                ptyRows: run.ptyRows,
                pausedByServer: run.pausedByServer,
                shell: run.shell?.state ?? null,
              }
            : null,
        });
        if (run) chunks.push(run.ring.slice(run.ring.start, run.ring.end));
      }
    } catch (err) {
      abort();
      throw err;
    }
    return {
      document: { type: "handover", format: 1, sessions },
      bytes: Buffer.concat(chunks),
      fds,
      programs,
      release: () => {
        for (const h of handed) h.release();
        // The successor listens for handed streams at the same path now.
        this.streams?.stopListening({ keepPath: true });
        // What is left here only waits for the programs' exits; the successor holds the sessions.
        this.sessions.clear();
        this.runs.clear();
      },
      abort,
    };
  }

  /** Take over the sessions a predecessor handed over: same ids, generations, offsets and programs. */
  adoptHandover(document: HandoverDocument, bytes: Uint8Array, adopt: (fd: number, pid: number, ptsName: string | null) => AdoptedPty): void {
    let at = 0;
    for (const handed of document.sessions) {
      const session: HostedSession = { meta: handed.meta, cols: handed.cols, rows: handed.rows, run: null, submissions: new Map(handed.submissions.map((x) => [x.id, x])), hybrid: handed.hybrid ?? null };
      this.sessions.set(handed.meta.id, session);
      const h = handed.run;
      if (!h) continue;
      const ringBytes = bytes.subarray(at, at + h.end - h.start);
      at += h.end - h.start;
      const ring = new RingBuffer(h.bufferBytes);
      ring.restore(h.start, ringBytes);
      const scanner = new TerminalScanner();
      if (h.start > 0 && h.modes) scanner.feed(new TextEncoder().encode(h.modes));
      scanner.feed(ringBytes);
      const pty: PtyProcess = h.status === "running" && h.fd !== null ? adopt(h.fd, h.pid, h.ptsName) : exitedPty(h.pid, h.exitCode ?? 0);
      const run: HostedRun = {
        ref: h.ref,
        generation: h.generation,
        pty,
        ring,
        scanner,
        status: h.status === "running" && h.fd !== null ? "running" : "exited",
        exitCode: h.exitCode,
        ptyCols: h.ptyCols,
        ptyRows: h.ptyRows,
        shell: h.shell ? ShellMarks.restore(h.shell) : null,
        ...idleRunState(),
      };
      session.run = run;
      this.runs.set(run.ref, { session, run });
      if (run.status === "running") {
        this.adoptedPtys.set(h.pid, pty as AdoptedPty);
        this.listen(session, run);
      }
    }
  }

  /** The predecessor saw a handed-over program end. */
  reaped(pid: number, exit: PtyExit): void {
    this.adoptedPtys.get(pid)?.reaped(exit);
  }

  /** The pids of the programs taken over from a predecessor that have not ended yet. */
  adoptedPids(): number[] {
    return [...this.adoptedPtys.keys()];
  }

  /** Programs taken over from a predecessor that have not ended yet (their exits are still to come). */
  get adoptedRunning(): number {
    return this.adoptedPtys.size;
  }

  /**
   * A hybrid session's conversation state (docs/design.md, What survives a restart): kept for the
   * next server. A session parked at its chat end has no run yet: its record starts here.
   */
  private setHybrid(params: unknown): HostReply {
    const meta = param(params, "meta", isMeta);
    const state = isRecord(params) ? params.state : undefined;
    if (!isRecord(state) || JSON.stringify(state).length > MAX_HYBRID_RECORD_BYTES) throw new HostRequestError("BAD_REQUEST", "bad or missing state");
    let session = this.sessions.get(meta.id);
    if (!session) {
      session = { meta, cols: param(params, "cols", isSize), rows: param(params, "rows", isSize), run: null, submissions: new Map(), hybrid: null };
      this.sessions.set(meta.id, session);
    }
    session.hybrid = state;
    return { result: null };
  }

  private async drain(params: unknown): Promise<HostReply> {
    const { run } = this.requireRun(params);
    if (run.status !== "running") return { result: { written: false } };
    await run.pty.drained();
    return { result: { written: run.status === "running" } };
  }

  /**
   * A submission's bytes and its record arrive in one frame, so the host either has both or
   * neither: a record it holds was written, at most once (docs/protocol.md § Submissions).
   */
  private async submit(params: unknown, data: Uint8Array): Promise<HostReply> {
    const { session, run } = this.requireRun(params);
    const id = param(params, "id", isString);
    const clientId = param(params, "clientId", isString);
    const createdAt = param(params, "createdAt", (v): v is number => Number.isFinite(v));
    return { result: { state: await this.writeSubmission(session, run, id, clientId, createdAt, data) } };
  }

  /** A streamed Session's submission: the same record, so the next server answers its state too. */
  private async submitOnce(session: HostedSession, run: HostedRun, id: string, clientId: string, createdAt: number, data: Uint8Array): Promise<"written" | "partial"> {
    return (await this.writeSubmission(session, run, id, clientId, createdAt, data)) === "written" ? "written" : "partial";
  }

  private async writeSubmission(session: HostedSession, run: HostedRun, id: string, clientId: string, createdAt: number, data: Uint8Array): Promise<HostedSubmission["state"]> {
    const known = session.submissions.get(id);
    if (known) return known.state;
    const record: HostedSubmission = { id, clientId, createdAt, state: "received" };
    session.submissions.set(id, record);
    this.trimSubmissions(session);
    if (run.status !== "running") {
      record.state = "partial";
      return record.state;
    }
    run.pty.write(data);
    await run.pty.drained();
    record.state = run.status === "running" ? "written" : "partial";
    return record.state;
  }

  private trimSubmissions(session: HostedSession): void {
    const cutoff = Date.now() - SUBMISSION_KEPT_MS;
    for (const [id, record] of session.submissions) {
      if (session.submissions.size <= SUBMISSIONS_KEPT && record.createdAt >= cutoff) break;
      session.submissions.delete(id);
    }
  }

  private pauseForQueue(server: HostPeer): void {
    this.pausedByQueue = true;
    this.applyPause();
    server.socket.socket.once("drain", () => {
      if (!this.pausedByQueue) return;
      this.pausedByQueue = false;
      this.applyPause();
    });
  }

  private applyPause(): void {
    for (const { run } of this.runs.values()) this.applyPauseOf(run);
  }

  private applyPauseOf(run: HostedRun): void {
    if (run.status !== "running") return;
    if (run.pausedByServer || this.pausedByQueue || run.pausedByStream) run.pty.pause();
    else run.pty.resume();
  }

  private requireSession(params: unknown): HostedSession {
    const id = param(params, "id", isString);
    const session = this.sessions.get(id);
    if (!session) throw new HostRequestError("NOT_FOUND", `no session ${id}`);
    return session;
  }

  private requireRun(params: unknown): { session: HostedSession; run: HostedRun } {
    const ref = param(params, "ref", isRef);
    const found = this.runs.get(ref);
    if (!found) throw new HostRequestError("NOT_FOUND", `no run ${ref}`);
    return found;
  }
}

/** The PtyProcess of a run that had ended before it was handed over: nothing to do. */
function exitedPty(pid: number, exitCode: number): PtyProcess {
  const exit = { exitCode, signal: null };
  return {
    pid,
    exited: Promise.resolve(exit),
    onData: () => {},
    onExit: () => {},
    write: () => {},
    drained: () => Promise.resolve(),
    resize: () => {},
    pause: () => {},
    resume: () => {},
    kill: () => {},
  };
}
