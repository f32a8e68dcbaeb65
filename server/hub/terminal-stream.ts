import {
  decodeClientFrame,
  encodeControl,
  encodeExit,
  encodeOutput,
  encodeOutputChunks,
  encodePosition,
  encodeSnapshot,
  encodeStatus,
  encodeSubmitStatus,
  FrameEncodeError,
  type ClientMessage,
  type FrameAllocator,
} from "../contract/frames.ts";
import { CloseCode, MAX_QUERY_IDS } from "../contract/protocol.ts";
import type { SubmitStatusPayload } from "../contract/types.ts";
import type { LeaseEffect } from "../session/controller-lease.ts";
import type { Session, SessionLink } from "../session/session.ts";
import type { StatusDelivery } from "../session/submission-log.ts";
import type { ScanEvent } from "../vt/terminal-scanner.ts";
import {
  COALESCE_AFTER_BYTES,
  COALESCE_WINDOW_MS,
  COMPRESSED_COALESCE_WINDOW_MS,
  FLUSH_BYTES,
  PAUSE_HIGH_WATER_BYTES,
  PAUSE_LOW_WATER_BYTES,
  SLOW_CHECK_INTERVAL_MS,
} from "./flow-control.ts";
import { TerminalConnection } from "./terminal-connection.ts";


/** An output frame's every byte is written: its memory need not be zeroed first. */
const allocOutputFrame: FrameAllocator = (bytes) => Buffer.allocUnsafe(bytes);

/** How long the PTY stays one column narrower during a redraw request: long enough for a TUI to see the SIGWINCH and re-query the size. */
export const REDRAW_HOLD_MS = 100;


export type AttachOptions = {
  resume: { generation: string; offset: number } | null;
  history: boolean;
};

/**
 * All connections of one session. It turns the session's typed events into frames, coalesces
 * output per tick (encoded once for every connection), builds replays, applies back-pressure and
 * routes client frames through the session's controller lease and submission log.
 */
export class TerminalStream {
  /** each connection with its link to the session (docs/design.md § Control) */
  private readonly connections = new Map<TerminalConnection, SessionLink>();
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;
  private flushTimer: ReturnType<typeof setTimeout> | null = null;
  private lastFlushAt = 0;
  /** COALESCE_WINDOW_MS, or COMPRESSED_COALESCE_WINDOW_MS while every connection compresses */
  private coalesceWindowMs = COALESCE_WINDOW_MS;
  /** bytes flushed since output last paused for a coalescing window */
  private burstBytes = 0;
  private pausedFor: TerminalConnection | null = null;
  private redrawTimer: ReturnType<typeof setTimeout> | null = null;
  private slowTimer: ReturnType<typeof setInterval> | null = null;
  private readonly unsubscribe: (() => void)[] = [];
  /** IDs of submissions written by this stream whose bytes are still draining into the program */
  private readonly inFlight = new Set<string>();
  /** the program exited and its connections are being closed: seat changes are not announced */
  private ending = false;

  constructor(readonly session: Session) {
    const ev = session.events;
    this.unsubscribe.push(
      // First: an echo goes out before the agent's tracker and capture look at the same bytes
      // (docs/design.md § The path of a keystroke).
      ev.on("output", (chunk, events) => this.onOutput(chunk, events), { first: true }),
      ev.on("exit", (code) => this.onExit(code)),
    );
  }

  get size(): number {
    return this.connections.size;
  }

  /** A redraw request is under way (its size restore has not fired yet). */
  get redrawPending(): boolean {
    return this.redrawTimer !== null;
  }

  /** Bytes of output waiting for the next flush (for tests of coalescing). */
  get pendingOutputBytes(): number {
    return this.pendingBytes;
  }

  // ---- output ----

  private onOutput(chunk: Uint8Array, events: readonly ScanEvent[]): void {
    if (this.connections.size === 0) return;
    // A 2031 change is broadcast right after the output that made it, with the state as of that
    // byte (a chunk may turn it off and on again).
    let sent = 0;
    for (const ev of events) {
      if (ev.type !== "mode" || ev.mode !== 2031) continue;
      this.pending.push(chunk.subarray(sent, ev.at));
      this.pendingBytes += ev.at - sent;
      sent = ev.at;
      this.flush();
      this.broadcastControl(null, ev.on);
    }
    if (sent < chunk.length) {
      this.pending.push(sent === 0 ? chunk : chunk.subarray(sent));
      this.pendingBytes += chunk.length - sent;
    }
    if (this.pendingBytes >= FLUSH_BYTES) {
      this.flush();
      return;
    }
    if (this.flushTimer) return;
    const since = performance.now() - this.lastFlushAt;
    if (since >= this.coalesceWindowMs) this.burstBytes = 0;
    if (this.burstBytes < COALESCE_AFTER_BYTES) {
      // Output after a pause, or the start of a burst (an echo), goes out now.
      this.flush();
    } else {
      this.flushTimer = setTimeout(() => {
        this.flushTimer = null;
        this.flush();
      }, this.coalesceWindowMs - since);
    }
  }

  /** The longer window only while no connection is plain: one frame serves them all, and a plain one may be a local, fast reader. */
  private chooseCoalesceWindow(): void {
    let allCompressed = this.connections.size > 0;
    for (const conn of this.connections.keys()) allCompressed &&= conn.compressed;
    this.coalesceWindowMs = allCompressed ? COMPRESSED_COALESCE_WINDOW_MS : COALESCE_WINDOW_MS;
  }

  /** Send coalesced output to every live connection; afterwards each has seen exactly [.., ring.end). */
  flush(): void {
    if (this.flushTimer) {
      clearTimeout(this.flushTimer);
      this.flushTimer = null;
    }
    if (this.pendingBytes === 0) {
      this.pending.length = 0;
      return;
    }
    const frame = this.pending.length === 1 ? encodeOutput(this.pending[0]!, allocOutputFrame) : encodeOutputChunks(this.pending, allocOutputFrame);
    this.burstBytes += this.pendingBytes;
    this.pending = [];
    this.pendingBytes = 0;
    this.lastFlushAt = performance.now();
    for (const conn of this.connections.keys()) {
      conn.send(frame);
      if (conn.queuedBytes > 0) this.checkPressure(conn);
    }
  }

  private onExit(exitCode: number): void {
    this.flush();
    this.cancelRedraw();
    // Submissions still draining into the program end `partial`, announced before the exit frame.
    for (const id of this.inFlight) this.deliver(this.session.submissions.abandon(id));
    this.inFlight.clear();
    const leaving = [...this.connections.keys()];
    // Every client gets status and exit before any leaves, and the seat emptying as they go is not
    // broadcast: nothing may come between a client's last output and its status, exit, 4410.
    this.ending = true;
    try {
      for (const conn of leaving) {
        // A replay in preparation sends status, exit and 4410 itself, after its snapshot.
        if (conn.isHolding) continue;
        this.sendFrame(conn, () => encodeStatus(this.session.info()));
        this.sendFrame(conn, () => encodeExit({ exitCode }));
      }
      for (const conn of leaving) if (!conn.isHolding) conn.close(CloseCode.EXITED, "session exited");
    } finally {
      this.ending = false;
    }
  }

  // ---- attach and replay ----

  attach(conn: TerminalConnection, options: AttachOptions): void {
    // Output already read is sent first, so the replay and the live stream meet exactly at ring.end.
    this.flush();
    const link = this.session.connect(conn);
    this.connections.set(conn, link);
    this.chooseCoalesceWindow();
    this.applyLeaseEffect(link.effect, conn);
    this.replay(conn, options, false);
    this.ensureSlowCheck();
  }

  /**
   * The replay, in the order docs/protocol.md § Attach and replay order fixes: control, position,
   * snapshot or [offset, end), status, held submission statuses, then exit (close 4410) for an
   * exited program. What to send is the session's decision (Session.replay); this only frames it.
   */
  private replay(conn: TerminalConnection, options: AttachOptions, isResync: boolean): void {
    const { session } = this;
    conn.replaying = true;
    const epoch = ++conn.replayEpoch;
    const plan = session.replay(isResync ? null : options.resume, { history: options.history });
    const finish = (snapshot: Uint8Array | null) => {
      if (!conn.isOpen || conn.replayEpoch !== epoch) return;
      const tail: Uint8Array[] = [];
      if (snapshot) tail.push(snapshot);
      const status = this.tryEncode(conn, () => encodeStatus(session.info()));
      if (!status) return;
      tail.push(status);
      // Output and statuses held meanwhile follow the tail; the exit frame (the program may have
      // ended while the snapshot was prepared: onExit left this connection to us) comes last.
      if (conn.isHolding) conn.release(tail);
      else for (const f of tail) conn.send(f);
      conn.afterSent(() => this.replayDone(conn));
      if (session.status === "exited") {
        this.sendFrame(conn, () => encodeExit({ exitCode: session.exitCode ?? 0 }));
        conn.close(CloseCode.EXITED, "session exited");
      }
    };
    conn.send(this.controlFrame());
    conn.send(encodePosition(plan.position));
    if (plan.mode === "append") {
      if (plan.bytes.length > 0) conn.send(encodeOutput(plan.bytes));
      finish(null);
      return;
    }
    if ("raw" in plan) {
      finish(encodeSnapshot(plan.raw));
      return;
    }
    // A made snapshot is the state as of position.end: later output waits until it is ready.
    conn.hold();
    const running = session.status === "running";
    void plan.made.then(({ bytes, redraw }) => {
      finish(encodeSnapshot(bytes));
      if (running && redraw) this.requestRedraw();
    });
  }

  // ---- client frames ----

  handleFrame(conn: TerminalConnection, data: Uint8Array): void {
    if (!conn.isOpen) return;
    const message = decodeClientFrame(data);
    if (message.type === "invalid") {
      // A submission whose header named an ID is answered `failed: invalid`; anything else is ignored.
      if (message.id !== undefined && conn.canControl) this.deliver(this.session.submissions.reject(conn.clientId, message.id));
      return;
    }
    this.dispatch(conn, message);
  }

  private dispatch(conn: TerminalConnection, message: ClientMessage): void {
    const { session } = this;
    switch (message.type) {
      case "input":
        if (!this.claim(conn)) return;
        session.write(message.data);
        session.noteUserInput();
        return;
      case "autoReply":
        // docs/design.md, Device queries and auto-replies: until its replay is finished, a client's
        // answers are to queries in replayed bytes, asked long ago.
        if (!conn.replayFinished || !conn.canControl || !session.lease.mayAutoReply(conn)) return;
        session.write(message.data);
        return;
      case "replayParsed":
        conn.noteReplayParsed();
        return;
      case "resize":
        // Ownership check and resize in one synchronous step (the critical section).
        if (!session.lease.mayResize(conn)) return;
        if (message.cols === session.cols && message.rows === session.rows) return;
        session.resize(message.cols, message.rows);
        this.broadcastControl();
        return;
      case "resync":
        this.resync(conn);
        return;
      case "takeControl":
        this.claim(conn);
        return;
      case "submit": {
        if (!this.claim(conn)) return;
        const outcome = session.submissions.submit(
          conn.clientId,
          { id: message.header.id, generation: message.header.generation, body: message.body, submitKey: message.submitKey },
          session.submissionTarget(),
        );
        session.noteUserInput();
        this.deliver(outcome.now);
        if (outcome.settled) {
          const id = message.header.id;
          this.inFlight.add(id);
          void outcome.settled.then((deliveries) => {
            this.inFlight.delete(id);
            this.deliver(deliveries);
          });
        }
        return;
      }
      case "querySubmissions": {
        const statuses: SubmitStatusPayload[] = session.submissions.query(conn.clientId, message.ids.slice(0, MAX_QUERY_IDS));
        for (const status of statuses) this.sendStatusFrame(conn, status);
        return;
      }
    }
  }

  /**
   * docs/design.md, Back-pressure: a resync costs a full snapshot, so a connection already over its
   * queue bound is cut before one is built, and resyncs while a replay is in flight become one
   * replay after it.
   */
  private resync(conn: TerminalConnection): void {
    if (conn.isTooSlow()) {
      this.cut(conn);
      return;
    }
    if (conn.replaying) {
      conn.resyncWanted = true;
      return;
    }
    this.flush();
    this.replay(conn, { resume: null, history: true }, true);
  }

  /** The replay's frames have left the queue: serve the resync that waited for it, if any. */
  private replayDone(conn: TerminalConnection): void {
    conn.replaying = false;
    if (!conn.resyncWanted || !conn.isOpen || !this.connections.has(conn)) return;
    conn.resyncWanted = false;
    this.resync(conn);
  }

  /** Input, submissions and take-control hand control to the sender; false when it may not have it. */
  private claim(conn: TerminalConnection): boolean {
    const effect = this.connections.get(conn)?.claim();
    if (!effect) return false;
    this.applyLeaseEffect(effect, null);
    return true;
  }

  private deliver(deliveries: StatusDelivery[]): void {
    for (const { status, clients } of deliveries) {
      for (const conn of this.connections.keys()) if (clients.has(conn.clientId)) this.sendStatusFrame(conn, status);
    }
  }

  private sendStatusFrame(conn: TerminalConnection, status: SubmitStatusPayload): void {
    const frame = this.tryEncode(conn, () => encodeSubmitStatus(status));
    if (frame) conn.send(frame);
  }

  // ---- control ----

  private controlFrame(colorSchemeReports = this.session.modes.colorSchemeReports): Uint8Array {
    const { session } = this;
    return encodeControl({
      controller: session.lease.info,
      cols: session.cols,
      rows: session.rows,
      colorSchemeReports,
    });
  }

  /** The grid changed from outside the stream (a resize the server relayed to the session host): every connection hears it. */
  announceControl(): void {
    this.broadcastControl();
  }

  private broadcastControl(except: TerminalConnection | null = null, colorSchemeReports?: boolean): void {
    const frame = this.controlFrame(colorSchemeReports);
    for (const conn of this.connections.keys()) if (conn !== except) conn.send(frame);
  }

  /** Announce a lease change; `attaching` gets its control frame from its own replay. */
  private applyLeaseEffect(effect: LeaseEffect, attaching: TerminalConnection | null): void {
    if (effect.broadcast && !this.ending) this.broadcastControl(attaching);
    if (effect.solo && effect.solo !== attaching && !this.ending) {
      const solo = [...this.connections.keys()].find((c) => c === effect.solo);
      solo?.send(this.controlFrame());
    }
    this.repace();
  }

  /**
   * Ask a running program to repaint (docs/design.md, Redraw request): make the PTY one column
   * narrower for a moment, then restore the logical grid. Narrower, never wider: what the program
   * draws for the transient size fits every client's grid, so nothing wraps or scrolls. A resize
   * meanwhile wins because the restore reads the session's current size when it fires.
   */
  private requestRedraw(): void {
    const { session } = this;
    if (session.status !== "running" || this.redrawTimer) return;
    session.resizePtyOnly(session.cols - 1, session.rows);
    this.redrawTimer = setTimeout(() => {
      this.redrawTimer = null;
      session.resizePtyOnly(session.cols, session.rows);
    }, REDRAW_HOLD_MS);
  }

  private cancelRedraw(): void {
    if (this.redrawTimer) clearTimeout(this.redrawTimer);
    this.redrawTimer = null;
  }

  // ---- back-pressure ----

  /** The connection whose lag pauses the PTY: the controller's effective connection, never an observer. */
  private pacer(): TerminalConnection | null {
    const effective = this.session.lease.effectiveConnection;
    return effective && this.connections.has(effective as TerminalConnection) ? (effective as TerminalConnection) : null;
  }

  private checkPressure(conn: TerminalConnection): void {
    if (conn.isTooSlow()) {
      this.cut(conn);
      return;
    }
    if (conn === this.pacer() && !this.pausedFor && conn.queuedBytes > PAUSE_HIGH_WATER_BYTES) {
      this.pausedFor = conn;
      this.session.pauseOutput();
    }
  }

  onDrain(conn: TerminalConnection): void {
    if (this.pausedFor === conn && conn.queuedBytes < PAUSE_LOW_WATER_BYTES) this.resumePty();
  }

  /** Re-evaluate pausing after control moved or a connection left. */
  private repace(): void {
    if (this.pausedFor && this.pausedFor !== this.pacer()) this.resumePty();
  }

  private resumePty(): void {
    this.pausedFor = null;
    this.session.resumeOutput();
  }

  private cut(conn: TerminalConnection): void {
    conn.close(CloseCode.TOO_SLOW, "too slow; reconnect and resume");
  }

  private ensureSlowCheck(): void {
    if (this.slowTimer) return;
    this.slowTimer = setInterval(() => {
      const now = Date.now();
      for (const conn of this.connections.keys()) if (conn.isTooSlow(now)) this.cut(conn);
    }, SLOW_CHECK_INTERVAL_MS);
    this.slowTimer.unref?.();
  }

  // ---- leaving ----

  /** Called once per connection when it closed (either side). */
  detach(conn: TerminalConnection): void {
    const link = this.connections.get(conn);
    if (!link) return;
    this.connections.delete(conn);
    this.chooseCoalesceWindow();
    this.applyLeaseEffect(link.leave(), null);
    if (this.pausedFor === conn) this.resumePty();
    if (this.connections.size === 0 && this.slowTimer) {
      clearInterval(this.slowTimer);
      this.slowTimer = null;
    }
  }

  /** Session removed or server closing: close every connection with `code`. */
  closeAll(code: number, reason: string): void {
    for (const conn of [...this.connections.keys()]) conn.close(code, reason);
  }

  dispose(): void {
    this.cancelRedraw();
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    if (this.slowTimer) clearInterval(this.slowTimer);
    this.slowTimer = null;
    if (this.pausedFor) this.resumePty();
    for (const off of this.unsubscribe) off();
  }

  // ---- encoding failures close only that connection (1011) ----

  private tryEncode(conn: TerminalConnection, encode: () => Uint8Array): Uint8Array | null {
    try {
      return encode();
    } catch (err) {
      if (!(err instanceof FrameEncodeError)) console.error("webmux: frame encoding failed:", err);
      conn.close(CloseCode.INTERNAL, "cannot encode frame");
      return null;
    }
  }

  private sendFrame(conn: TerminalConnection, encode: () => Uint8Array): void {
    const frame = this.tryEncode(conn, encode);
    if (frame) conn.send(frame);
  }
}
