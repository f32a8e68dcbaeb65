/**
 * Waits for a keystroke's echo on the master instead of in the event loop's sleep.
 *
 * A keystroke's round trip crosses processes four times (browser → server → program → server →
 * browser) against twice for a terminal emulator hosting the program itself, and on a virtual
 * machine each crossing that has to wake a sleeping CPU costs tens of microseconds. The third
 * crossing need not wait for a wake-up: right after a keystroke went to the program the server
 * reads the master itself, non-blocking, for a fraction of a millisecond, and sends the echo
 * on the moment it is there (`npm run bench -- --only echo-latency`).
 *
 * The cost is bounded: only writes of a keystroke's size poll, each for at most
 * ECHO_POLL_BUDGET_MS, and all sessions together for at most ECHO_POLL_MAX_SHARE of the time, so
 * a client sending a flood of one-byte frames to a program that never echoes slows nobody.
 * Never while the session paused reading or bytes wait in node-pty's stream: whatever is read
 * here comes before anything libuv reads later (both happen on this one thread, and the stream
 * holds nothing), so the output keeps its order.
 */
import { readSync } from "node:fs";

/** A write this small is a keystroke (or a key's escape sequence); a paste is not waited on. */
export const ECHO_POLL_MAX_INPUT_BYTES = 32;
/**
 * How long one keystroke may hold the event loop waiting for its echo: a line editor's echo
 * comes within 0.25 ms here even after the machine idled (p90 of `cat` after 10 ms pauses).
 */
export const ECHO_POLL_BUDGET_MS = 0.5;
/** All polling together stays under this share of wall time (2%: 40 keys a second that never echo). */
export const ECHO_POLL_MAX_SHARE = 0.02;
/** The share is measured over about this long: a burst of typing may use it up front. */
const ECHO_POLL_WINDOW_MS = 1_000;
/** One read of the echo; more (a redraw) is left to the stream. */
const ECHO_READ_BYTES = 16 * 1024;

/**
 * A token bucket of polling time shared by every session: it refills at ECHO_POLL_MAX_SHARE of
 * the wall clock and holds at most one window's worth.
 */
export class EchoPollBudget {
  private available: number;
  private at: number;

  constructor(
    private readonly share = ECHO_POLL_MAX_SHARE,
    private readonly windowMs = ECHO_POLL_WINDOW_MS,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.available = share * windowMs;
    this.at = now();
  }

  /** Whether a poll may start now (it may overrun what is left by one poll's budget). */
  mayPoll(): boolean {
    const now = this.now();
    this.available = Math.min(this.share * this.windowMs, this.available + (now - this.at) * this.share);
    this.at = now;
    return this.available > 0;
  }

  spend(ms: number): void {
    this.available -= ms;
  }
}

/** What the server learned about echoes since it started (GET /api/debug/stats). */
export type EchoPollStats = { polls: number; hits: number; pollMs: number };

const stats: EchoPollStats = { polls: 0, hits: 0, pollMs: 0 };
const sharedBudget = new EchoPollBudget();
/** Shared by every session: the server reads on one thread, and the bytes are copied out. */
let scratch: Buffer | null = null;

export function echoPollStats(): EchoPollStats {
  return { ...stats, pollMs: Math.round(stats.pollMs * 1000) / 1000 };
}

export type EchoSource = {
  /** the master, non-blocking */
  readonly fd: number;
  /** false while reading directly would reorder or steal output (paused, buffered, exiting) */
  readable(): boolean;
  deliver(chunk: Buffer): void;
};

export class EchoPoller {
  private scheduled = false;
  private dataSinceWrite = false;

  constructor(
    private readonly source: EchoSource,
    private readonly budget: EchoPollBudget = sharedBudget,
  ) {}

  /** Output arrived through the stream. */
  noteData(): void {
    this.dataSinceWrite = true;
  }

  /** `bytes` went to the program: look for the echo once the current callbacks are done. */
  afterWrite(bytes: number): void {
    if (bytes > ECHO_POLL_MAX_INPUT_BYTES || this.scheduled) return;
    this.scheduled = true;
    this.dataSinceWrite = false;
    // In the check phase: after the callback that wrote (its caller finishes first, so output
    // never arrives inside a write) and before the loop would sleep.
    setImmediate(() => {
      this.scheduled = false;
      if (!this.dataSinceWrite) this.poll();
    });
  }

  private poll(): void {
    const { source } = this;
    if (!source.readable() || !this.budget.mayPoll()) return;
    const buffer = (scratch ??= Buffer.allocUnsafe(ECHO_READ_BYTES));
    const start = performance.now();
    const deadline = start + ECHO_POLL_BUDGET_MS;
    let read = 0;
    let now = start;
    do {
      try {
        read = readSync(source.fd, buffer, 0, buffer.length, null);
        break;
      } catch (err) {
        // EAGAIN: nothing yet. Anything else (EIO: the program's side closed) is the stream's
        // and the exit path's to handle.
        if ((err as NodeJS.ErrnoException).code !== "EAGAIN") break;
      }
      now = performance.now();
    } while (now < deadline);
    const spent = performance.now() - start;
    this.budget.spend(spent);
    stats.polls++;
    stats.pollMs += spent;
    if (read > 0) {
      stats.hits++;
      source.deliver(Buffer.from(buffer.subarray(0, read)));
    }
  }
}
