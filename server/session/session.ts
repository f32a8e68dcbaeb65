import type { ControllerInfo, HybridInfo, SessionInfo } from "../contract/types.ts";
import type { PtyExit, PtyProcess, SpawnPty } from "../pty/pty.ts";
import { OWN_READ_BUFFER_BYTES } from "../pty/own-read-buffer.ts";
import { TERMINATE_GRACE_MS, terminate } from "../pty/terminate.ts";
import { ControllerLease, type LeaseConnection, type LeaseEffect } from "./controller-lease.ts";
import { Emitter } from "./emitter.ts";
import { HeadlessScreen, RING_TAIL_BYTES, type HeadlessScreenOptions, type HeadlessScreenStats, type ReadResult } from "./headless-screen.ts";
import { Replayer, type ReplayPlan, type ResumePoint } from "./replay.ts";
import { RingBuffer } from "./ring-buffer.ts";
import { SubmissionLog, type RestoredSubmission, type SubmissionTarget } from "./submission-log.ts";
import { TerminalScanner, type ScanEvent } from "../vt/terminal-scanner.ts";

/** A previewed line longer than this is cut: the list shows a glance, not the screen. */
export const PREVIEW_LINE_MAX_CHARS = 200;
/** Previews are recomputed at most this often while the screen keeps changing. */
export const PREVIEW_REFRESH_MS = 250;

export type SessionOptions = {
  id: string;
  command: string[];
  cwd: string;
  env: Record<string, string>;
  cols: number;
  rows: number;
  title?: string;
  bufferBytes: number;
  spawnPty: SpawnPty;
  /** A fresh generation id for each run, unique across server runs. */
  nextGeneration: () => string;
  /** A hybrid session's agent side (docs/hybrid.md), part of `info()`; absent for plain sessions. */
  hybrid?: () => HybridInfo;
  /** A run the session host kept across a restart of the server: the session resumes it instead of starting one. */
  adopt?: AdoptedState;
  /**
   * The screen mirror (default: a headless terminal of this process). The session host's streamed
   * Session uses the server's instead (docs/design.md § The session host serves the streams).
   */
  makeScreen?: (options: HeadlessScreenOptions) => SessionScreen;
  /**
   * The ring and scanner of a run another owner feeds (the session host's run, docs/design.md § The
   * session host serves the streams): the Session reads them instead of keeping copies. Each chunk
   * its PTY delivers is in the ring already, and `lastEvents` are the scanner's events for it.
   * Such a Session only follows `adopt`'s run; it never starts one.
   */
  shared?: SharedRun;
};

/** A ring and scanner that another owner feeds (see `SessionOptions.shared`). */
export type SharedRun = { ring: RingBuffer; scanner: TerminalScanner; lastEvents(): readonly ScanEvent[] };

/** What a Session asks of its screen mirror; a HeadlessScreen is one. */
export type SessionScreen = Pick<HeadlessScreen, "write" | "resize" | "reset" | "serialize" | "preview" | "read" | "onChange" | "stats" | "dispose">;

/**
 * What a restarted server takes over from the session host (docs/design.md, What survives a
 * restart): the run's generation and ring at the same offsets, so clients resume with `append`.
 */
export type AdoptedState = {
  createdAt: number;
  generation: string;
  /** the ring's retained bytes, which begin at absolute offset `start` */
  start: number;
  bytes: Uint8Array;
  /** restores the terminal modes set by output before `start` */
  modes: string;
  /** the running program, or null when it has exited */
  pty: PtyProcess | null;
  exitCode: number | null;
  submissions: readonly RestoredSubmission[];
};

/**
 * How much later output an `output` chunk outlives unchanged: it may be a view of the ring, which
 * writes over it only once the ring has wrapped past it. The hub keeps chunks until its next flush
 * (at most its FLUSH_BYTES plus one read); everyone else copies what they keep. A ring smaller than
 * this plus the chunk hands on copies instead.
 */
export const OUTPUT_CHUNK_LIFETIME_BYTES = 512 * 1024;

/** A lent read just appended to `ring`, as bytes that outlive the read: the ring's copy where it lasts OUTPUT_CHUNK_LIFETIME_BYTES, else a copy of its own. */
export function keepAppended(ring: RingBuffer, read: Uint8Array): Uint8Array {
  return ring.lastAppended(read.length, OUTPUT_CHUNK_LIFETIME_BYTES) ?? new Uint8Array(read);
}
/**
 * A lent read larger than a PTY read (a batch of the session host's output) is taken in pieces of
 * a PTY read's size, as that many reads: the hub's chunks must outlive its FLUSH_BYTES plus one piece.
 */
export const LENT_PIECE_BYTES = OWN_READ_BUFFER_BYTES;

/** Everything a subscriber (the hub) needs to follow a session's output, in order. */
export type SessionEvents = {
  /**
   * Raw PTY bytes, already in the ring at [end - chunk.length, end). The chunk may be the ring's
   * own memory: it stays as it is while OUTPUT_CHUNK_LIFETIME_BYTES more bytes of output follow,
   * so a subscriber that keeps it longer copies it.
   */
  output: [chunk: Uint8Array, events: readonly ScanEvent[]];
  /** The program ended; its last output was delivered before. */
  exit: [exitCode: number];
  /** A new run started (restart): offsets begin at 0 again. */
  generation: [generation: string];
  /** Something in `info()` changed. `previewOnly` lets the list throttle screen-only changes harder. */
  changed: [previewOnly: boolean];
  /** A tracked DEC private mode changed (2031 among them), after the output that changed it. */
  mode: [mode: number, on: boolean];
  attention: [];
  /** A person typed or submitted (never an auto-reply): what makes a session the "active" one. */
  input: [];
};

/**
 * What the hub and the chat room may ask of the controller lease (docs/protocol.md § Controller
 * rules); a seat changes only through a connection's `SessionLink`, so `info()` always says who
 * holds it and how many are attached.
 */
export type SeatView = Pick<ControllerLease, "info" | "effectiveConnection" | "mayResize" | "mayAutoReply" | "bindClientId">;

/** One transport connection (terminal or chat) as the session counts it; from `Session.connect`. */
export type SessionLink = {
  /** what its arrival changed, for the transport to announce */
  readonly effect: LeaseEffect;
  /** it sent input, a submission or take-control: it takes the seat; null when it may not */
  claim(): LeaseEffect | null;
  /** it closed (either side); a second call changes nothing */
  leave(): LeaseEffect;
};

/** The terminal modes the program set, as a snapshot restores them (read-only). */
export type TerminalModes = Pick<TerminalScanner, "bracketedPaste" | "alternateScreen" | "colorSchemeReports" | "restoreSequence">;

/**
 * Who holds the seat of a session whose terminal streams another process serves (the session host,
 * docs/design.md § The session host serves the streams), and how many connections it has there.
 */
export type RemoteSeat = { controller: ControllerInfo | null; clients: number };

/** The retained output of the current run and the mirror's figures (debug routes, benches, tests). */
export type SessionStats = {
  /** absolute offsets of the retained bytes [start, end) */
  start: number;
  end: number;
  /** bytes before `start` were dropped from the ring */
  truncated: boolean;
  screen: HeadlessScreenStats;
};

const NO_EFFECT: LeaseEffect = Object.freeze({ broadcast: false, solo: null }) as LeaseEffect;

/**
 * One PTY-hosted program and everything retained about its current run: the replay ring with
 * byte offsets, the terminal modes a snapshot must restore, and a headless screen mirror.
 * It knows nothing about WebSockets: it takes bytes and emits typed events.
 */
export class Session {
  readonly id: string;
  readonly command: string[];
  readonly createdAt: number;
  readonly events = new Emitter<SessionEvents>();
  private readonly ring: RingBuffer;
  private readonly screen: SessionScreen;
  private scanner: TerminalScanner;
  /** who controls the session (docs/protocol.md § Controller rules); changed only through `connect`'s links */
  private readonly controllerLease = new ControllerLease();
  /** connections linked by `connect` and not gone yet, terminal and chat together */
  private linked = 0;
  /** the seat as the session host that serves this session's terminal streams reports it; null: none there */
  private remoteSeat: RemoteSeat | null = null;
  /** submissions of this session, kept across restarts so a repeated ID is never written again */
  readonly submissions = new SubmissionLog();

  private readonly options: SessionOptions;
  private pty: PtyProcess | null = null;
  private exitPromise: Promise<void> = Promise.resolve();
  private userTitle: string | null;
  private programTitle: string | null = null;
  private currentCwd: string | null;
  private _generation: string;
  /** the generation drawn at birth has not been used by a run yet */
  private firstRunPending = true;
  private _status: "running" | "exited" = "exited";
  private _exitCode: number | null = null;
  private _cols: number;
  private _rows: number;
  private _attention = false;
  /** the ring's end at the grid's last change during this run (0: none after its first byte) */
  private resizedAt = 0;
  private readonly replayer = new Replayer(() => ({
    generation: this._generation,
    ring: this.ring,
    scanner: this.scanner,
    screen: this.screen,
    resizedAt: this.resizedAt,
  }));
  private _preview: string[] = [];
  private previewTimer: ReturnType<typeof setTimeout> | null = null;
  private disposed = false;
  private unsubscribeScreen: () => void;
  updatedAt = Date.now();

  constructor(options: SessionOptions) {
    this.options = options;
    this.createdAt = options.adopt?.createdAt ?? Date.now();
    this.id = options.id;
    this.command = options.command;
    this.userTitle = options.title?.trim() || null;
    this.currentCwd = options.cwd;
    this._cols = options.cols;
    this._rows = options.rows;
    // A session has a generation from birth, so one whose program has not started yet (a hybrid
    // session parked at its chat end) still describes itself validly; its first run uses it.
    this._generation = options.nextGeneration();
    this.ring = options.shared?.ring ?? new RingBuffer(options.bufferBytes);
    this.scanner = options.shared?.scanner ?? new TerminalScanner();
    const screenOptions: HeadlessScreenOptions = {
      cols: options.cols,
      rows: options.rows,
      modes: () => this.scanner.restoreSequence(),
      // A ring smaller than the tail would give a skimmed mirror less than a tail of its own.
      recentOutput: this.ring.capacity >= RING_TAIL_BYTES ? (maxBytes) => this.recentOutput(maxBytes) : undefined,
    };
    this.screen = options.makeScreen ? options.makeScreen(screenOptions) : new HeadlessScreen(screenOptions);
    this.unsubscribeScreen = this.screen.onChange(() => this.schedulePreview());
    if (options.adopt) this.resume(options.adopt);
  }

  /** The last `maxBytes` of this generation's output, and whether earlier output was left out. */
  private recentOutput(maxBytes: number): { bytes: Uint8Array; cut: boolean } {
    const from = Math.max(this.ring.start, this.ring.end - maxBytes);
    return { bytes: this.ring.slice(from), cut: from > 0 };
  }

  /** Take over a run kept by the session host: its bytes into the ring, scanner and screen, then its live output. */
  private resume(adopt: AdoptedState): void {
    this._generation = adopt.generation;
    this.firstRunPending = false;
    const shared = this.options.shared;
    const bytes = shared ? shared.ring.slice(shared.ring.start, shared.ring.end) : adopt.bytes;
    if (!shared) this.ring.restore(adopt.start, adopt.bytes);
    // (a shared scanner has read these bytes already: a scanner of our own finds the title and directory in them)
    const scanner = shared ? new TerminalScanner() : this.scanner;
    if (adopt.start > 0 && adopt.modes) {
      const modes = new TextEncoder().encode(adopt.modes);
      scanner.feed(modes);
      this.screen.write(modes);
    }
    for (const ev of scanner.feed(bytes)) {
      if (ev.type === "title") this.programTitle = ev.title || null;
      else if (ev.type === "cwd") this.currentCwd = ev.cwd;
    }
    this.screen.write(bytes);
    this.submissions.restore(adopt.submissions);
    const pty = adopt.pty;
    if (!pty) {
      this._status = "exited";
      this._exitCode = adopt.exitCode;
      void this.refreshPreview();
      return;
    }
    this.attach(pty);
  }

  /** Who holds the seat and what it allows; the seat itself changes through `connect`. */
  get lease(): SeatView {
    return this.controllerLease;
  }

  /**
   * A terminal or chat connection arrived (docs/design.md § Control): the lease sees it and
   * `info().clients` counts it until its link's `leave`. The transport announces the effects.
   */
  connect(conn: LeaseConnection): SessionLink {
    const effect = this.controllerLease.attach(conn);
    this.linked++;
    this.touch(false);
    let gone = false;
    return {
      effect,
      claim: () => {
        if (gone) return null;
        const claimed = this.controllerLease.claim(conn);
        if (claimed?.broadcast) this.touch(false);
        return claimed;
      },
      leave: () => {
        if (gone) return NO_EFFECT;
        gone = true;
        this.linked--;
        const left = this.controllerLease.detach(conn);
        this.touch(false);
        return left;
      },
    };
  }

  /** Connections attached now, terminal and chat together, here and in the session host (`info().clients`). */
  get clients(): number {
    return this.linked + (this.remoteSeat?.clients ?? 0);
  }

  /**
   * The session host serves this session's terminal streams: its lease decides the seat, and
   * `info()` says what it reports (null: it serves none now).
   */
  setRemoteSeat(seat: RemoteSeat | null): void {
    this.remoteSeat = seat && seat.clients > 0 ? seat : null;
    this.touch(false);
  }

  /** The terminal modes the program's output set. */
  get modes(): TerminalModes {
    return this.scanner;
  }

  /** The terminal's state as a snapshot restores it, as of every byte so far (the session host asks it of the server's mirror). */
  serializeScreen(options?: { scrollback?: number }): Promise<string> {
    return this.screen.serialize(options);
  }

  /** The screen as the mirror has it (the Agent API's read). */
  readScreen(options?: { scrollback?: number; styled?: boolean }): Promise<ReadResult> {
    return this.screen.read(options);
  }

  /** A copy of the retained output [from, to) of the current run (absolute offsets, clamped to what is kept). */
  readOutput(from = this.ring.start, to = this.ring.end): Uint8Array {
    const { start, end } = this.ring;
    const first = Math.min(Math.max(from, start), end);
    return this.ring.slice(first, Math.max(first, Math.min(to, end)));
  }

  stats(): SessionStats {
    return { start: this.ring.start, end: this.ring.end, truncated: this.ring.truncated, screen: this.screen.stats() };
  }

  /**
   * The headless screen itself, for tests that inject faults into the mirror (hold a snapshot
   * back, make it lose output). Product code never calls it (layers.test.ts).
   */
  static mirrorForFaultTests(session: Session): SessionScreen {
    return session.screen;
  }

  get generation(): string {
    return this._generation;
  }
  get status(): "running" | "exited" {
    return this._status;
  }
  get exitCode(): number | null {
    return this._exitCode;
  }
  get cols(): number {
    return this._cols;
  }
  get rows(): number {
    return this._rows;
  }
  get attention(): boolean {
    return this._attention;
  }
  get pid(): number | null {
    // 0 while a PTY in the session host is still starting
    return this._status === "running" ? this.pty?.pid || null : null;
  }
  get cwd(): string | null {
    return this.currentCwd;
  }
  /** The environment every run of the session's programs gets. */
  get env(): Readonly<Record<string, string>> {
    return this.options.env;
  }

  /**
   * Start (or start again) the program: a new generation whose offsets begin at 0. `command`
   * replaces the session's command for this run only (a hybrid session resumes its agent with
   * different arguments each time); `info().command` stays the session's own.
   */
  start(command: readonly string[] = this.command): void {
    if (this.disposed) throw new Error("session disposed");
    if (this._status === "running") throw new Error("session already running");
    if (this.options.shared) throw new Error("a session that follows another owner's run starts none");
    if (this.firstRunPending) this.firstRunPending = false;
    else this._generation = this.options.nextGeneration();
    this.ring.reset();
    this.resizedAt = 0;
    this.scanner = new TerminalScanner();
    this.screen.reset();
    this.programTitle = null;
    this._attention = false;
    this._exitCode = null;
    this._preview = [];
    const pty = this.options.spawnPty({
      command: [...command],
      cwd: this.options.cwd,
      env: this.options.env,
      cols: this._cols,
      rows: this._rows,
      label: { sessionId: this.id, generation: this._generation, command: this.command, env: this.options.env, createdAt: this.createdAt, title: this.userTitle, hybrid: this.options.hybrid !== undefined },
    });
    this.attach(pty);
    this.events.emit("generation", this._generation);
    this.touch(false);
  }

  private attach(pty: PtyProcess): void {
    this.pty = pty;
    this._status = "running";
    let resolveExit!: () => void;
    this.exitPromise = new Promise((r) => (resolveExit = r));
    if (pty.onLentData && !this.options.shared) {
      pty.onLentData((chunk) => {
        if (this.pty === pty) this.handleOutput(chunk, true);
      });
    } else {
      pty.onData((chunk) => {
        if (this.pty === pty) this.handleOutput(chunk, false);
      });
    }
    pty.onExit((exit) => {
      if (this.pty === pty) this.handleExit(exit);
      resolveExit();
    });
    // A PTY in the session host learns its pid a moment later: the list hears it then.
    pty.ready?.then(
      () => {
        if (this.pty === pty && this._status === "running") this.touch(false);
      },
      () => {},
    );
  }

  /** Resolves once the current run's program runs (a PTY in the session host answers later); rejects when it could not start. */
  async whenStarted(): Promise<void> {
    await this.pty?.ready;
  }

  /** Whether the current run's program is still being started (in the session host): its pid is not known yet. */
  get starting(): Promise<void> | null {
    return this.pty?.ready && this.pty.pid === 0 ? this.pty.ready : null;
  }

  /** The directory the session's programs start in. */
  get startCwd(): string {
    return this.options.cwd;
  }

  /** The title a user gave the session, or null. */
  get customTitle(): string | null {
    return this.userTitle;
  }

  /**
   * The program's input as a submission writes into it. A PTY in the session host takes the
   * bytes and the record in one step, so that a restart of the server never writes them twice.
   */
  submissionTarget(): SubmissionTarget {
    const pty = this.pty;
    return {
      generation: this._generation,
      running: this._status === "running",
      bracketedPaste: this.scanner.bracketedPaste,
      write: (bytes) => {
        if (!this.write(bytes)) throw new Error("program has exited");
      },
      drained: () => this.drained(),
      ...(pty?.submit && this._status === "running" ? { writeOnce: (record, bytes) => pty.submit!(record.id, record.clientId, record.createdAt, bytes) } : {}),
    };
  }

  /** `lent`: the chunk is the PTY's read buffer (PtyProcess.onLentData); what is emitted must outlive it. */
  private handleOutput(read: Uint8Array, lent: boolean): void {
    if (lent && read.length > LENT_PIECE_BYTES) {
      for (let at = 0; at < read.length; at += LENT_PIECE_BYTES) this.handleOutput(read.subarray(at, at + LENT_PIECE_BYTES), true);
      return;
    }
    const shared = this.options.shared;
    if (!shared) this.ring.append(read);
    // The ring holds the bytes now: its copy serves everyone after it, and a lent read needs no
    // second copy into fresh memory (docs/design.md § The path of an output byte).
    const chunk = lent ? keepAppended(this.ring, read) : read;
    const scanned = shared ? shared.lastEvents() : this.scanner.feed(chunk);
    // Clients first: the mirror's copy can wait the few microseconds.
    this.events.emit("output", chunk, scanned);
    this.screen.write(chunk);
    if (scanned.length === 0) return;
    let changed = false;
    for (const ev of scanned) {
      switch (ev.type) {
        case "title":
          if (ev.title !== this.programTitle) {
            this.programTitle = ev.title || null;
            changed = true;
          }
          break;
        case "cwd":
          if (ev.cwd !== this.currentCwd) {
            this.currentCwd = ev.cwd;
            changed = true;
          }
          break;
        case "bell":
        case "notify":
          this.raiseAttention();
          break;
        case "mode":
          this.events.emit("mode", ev.mode, ev.on);
          break;
        default:
          break;
      }
    }
    if (changed) this.touch(false);
  }

  private handleExit(exit: PtyExit): void {
    this._status = "exited";
    this._exitCode = exit.exitCode;
    this.cancelPreview();
    // Final preview from the screen as the program left it.
    void this.refreshPreview();
    this.events.emit("exit", exit.exitCode);
    this.touch(false);
  }

  /** Bytes for the program (keystrokes, pastes, replies). Ignored once it has exited. */
  write(data: Uint8Array | string): boolean {
    if (this._status !== "running" || !this.pty) return false;
    this.pty.write(data);
    return true;
  }

  /** Resolves when everything written so far reached the program's terminal: true, or false if it exited first. */
  async drained(): Promise<boolean> {
    const pty = this.pty;
    if (!pty || this._status !== "running") return false;
    await pty.drained();
    return this.pty === pty && this._status === "running";
  }

  /** The program wants the user (BEL, OSC 9/777, or an agent hook saying so). */
  raiseAttention(): void {
    if (this._attention) return;
    this._attention = true;
    this.events.emit("attention");
    this.touch(false);
  }

  /** A person's input (0x00, 0x03; never an auto-reply): clears the attention flag. */
  noteUserInput(): void {
    this.events.emit("input");
    this.clearAttention();
  }

  /** User input clears the attention flag (auto-replies must not call this). */
  clearAttention(): void {
    if (!this._attention) return;
    this._attention = false;
    this.touch(false);
  }

  /** Resize the program's terminal and the mirror; the logical grid everyone sees. */
  resize(cols: number, rows: number): void {
    if (this.changeGrid(cols, rows)) this.pty?.resize(cols, rows);
  }

  /**
   * The grid changed where the session's terminal streams are served (the session host, which
   * resized the program's terminal itself): the mirror follows, the PTY is left alone.
   */
  followResize(cols: number, rows: number): void {
    this.changeGrid(cols, rows);
  }

  /** The logical grid and the mirror take the new size; false when it is the size already. */
  private changeGrid(cols: number, rows: number): boolean {
    if (cols === this._cols && rows === this._rows) return false;
    this._cols = cols;
    this._rows = rows;
    this.resizedAt = this.ring.end;
    this.screen.resize(cols, rows);
    this.touch(false);
    return true;
  }

  /**
   * What a client resuming from `resume` needs (docs/design.md § Resume and replay): planned now,
   * covering output up to the ring's current end; call it after every output event so far was
   * delivered and register for live output in the same turn.
   */
  replay(resume: ResumePoint | null, options: { history: boolean }): ReplayPlan {
    return this.replayer.plan(resume, options);
  }

  /** Change only the PTY's real size, leaving the logical grid alone (used to request a redraw). */
  resizePtyOnly(cols: number, rows: number): void {
    if (this._status === "running") this.pty?.resize(cols, rows);
  }

  pauseOutput(): void {
    this.pty?.pause();
  }
  resumeOutput(): void {
    this.pty?.resume();
  }

  setTitle(title: string): void {
    this.userTitle = title.trim() || null;
    this.touch(false);
  }

  get title(): string {
    return this.userTitle ?? this.programTitle ?? this.command.join(" ");
  }

  /** Send a signal to the program's process group (a program's own way to stop, e.g. SIGTERM); ignored once it has exited. */
  signal(signal: NodeJS.Signals): void {
    if (this._status === "running") this.pty?.kill(signal);
  }

  /** End the program: SIGHUP, then SIGKILL after the grace; resolves once it has exited. */
  async terminate(graceMs = TERMINATE_GRACE_MS): Promise<void> {
    const pty = this.pty;
    if (!pty || this._status !== "running") return;
    await terminate(pty, graceMs);
    await this.exitPromise;
  }

  /** Start the command again in the same session: new generation, offsets from 0. */
  async restart(): Promise<void> {
    await this.terminate();
    this.start();
    await this.whenStarted().catch(() => {});
  }

  /**
   * Free the mirror and stop following the program, which keeps running in the session host
   * (a server that exits without ending its sessions).
   */
  release(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.pty = null;
    this.cancelPreview();
    this.unsubscribeScreen();
    this.screen.dispose();
    this.events.clear();
  }

  /** Terminate the program and free the mirror. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    await this.terminate();
    this.disposed = true;
    this.cancelPreview();
    this.unsubscribeScreen();
    this.screen.dispose();
    this.events.clear();
  }

  info(): SessionInfo {
    return {
      id: this.id,
      title: this.title,
      command: this.command,
      cwd: this.currentCwd,
      pid: this.pid,
      status: this._status,
      exitCode: this._exitCode,
      generation: this._generation,
      createdAt: this.createdAt,
      updatedAt: this.updatedAt,
      cols: this._cols,
      rows: this._rows,
      controller: this.linked === 0 && this.remoteSeat ? this.remoteSeat.controller : this.controllerLease.info,
      clients: this.clients,
      attention: this._attention,
      preview: this._preview,
      ...(this.options.hybrid ? { hybrid: this.options.hybrid() } : {}),
    };
  }

  /** Mark the session changed (by the session itself or the layers above: controller, clients). */
  touch(previewOnly: boolean): void {
    this.updatedAt = Date.now();
    this.events.emit("changed", previewOnly);
  }

  private schedulePreview(): void {
    if (this.previewTimer || this.disposed) return;
    this.previewTimer = setTimeout(() => {
      this.previewTimer = null;
      void this.refreshPreview();
    }, PREVIEW_REFRESH_MS);
    this.previewTimer.unref?.();
  }

  private cancelPreview(): void {
    if (this.previewTimer) clearTimeout(this.previewTimer);
    this.previewTimer = null;
  }

  private async refreshPreview(): Promise<void> {
    if (this.disposed) return;
    let lines: string[];
    try {
      lines = await this.screen.preview();
    } catch {
      return; // mirror gone (disposed meanwhile)
    }
    if (this.disposed) return;
    lines = lines.map((l) => (l.length > PREVIEW_LINE_MAX_CHARS ? l.slice(0, PREVIEW_LINE_MAX_CHARS) : l));
    if (lines.length === this._preview.length && lines.every((l, i) => l === this._preview[i])) return;
    this._preview = lines;
    this.touch(true);
  }
}
