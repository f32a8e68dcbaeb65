/**
 * The bytes on their way to a program's terminal: written to the PTY's master on the main thread
 * with one non-blocking write(2) each, and what the kernel does not take at once is kept here, in
 * order, until it does (docs/design.md § The path of a keystroke).
 *
 * Why not node-pty's own queue or `fs.write`: both write from libuv's thread pool, so a write can
 * still be on its way to the descriptor's number when the main thread closes the descriptor as the
 * program ends. node-pty then logs EBADF; worse, when the number was given to a file or socket
 * opened in between, the rest of a paste lands there. Here every write happens on the main
 * thread right after asking whether the descriptor is still this terminal's, so none can.
 */
import { constants } from "node:os";

/** One write(2) of `bytes`: how many the kernel took, or -errno (EAGAIN when its buffer is full). */
export type WriteSome = (bytes: Uint8Array) => number;

/** Attempts right after one that the kernel refused, each on the next turn: a program that reads keeps up within these. */
export const PTY_WRITE_QUICK_RETRIES = 4;
/** First wait once the quick retries found the kernel still full; it doubles while nothing goes in. */
export const PTY_WRITE_FIRST_BACKOFF_MS = 1;
/** Longest wait between attempts: a program that stopped reading costs one wake-up per this, not a spinning core. */
export const PTY_WRITE_MAX_BACKOFF_MS = 16;

/** The kernel's buffer is full; any other -errno means the terminal is gone (its value differs by platform). */
const EAGAIN = -constants.errno.EAGAIN;

export class PtyInputQueue {
  private readonly pending: Buffer[] = [];
  private scheduled: { immediate: ReturnType<typeof setImmediate> } | { timer: ReturnType<typeof setTimeout> } | null = null;
  private refusals = 0;
  private closed = false;
  private readonly waiters: Array<() => void> = [];

  /**
   * @param writeSome writes to the master
   * @param isOpen whether the descriptor is still this terminal's, asked right before every write
   */
  constructor(
    private readonly writeSome: WriteSome,
    private readonly isOpen: () => boolean,
  ) {}

  /** Bytes not yet taken by the kernel. */
  get pendingBytes(): number {
    let total = 0;
    for (const part of this.pending) total += part.length;
    return total;
  }

  /** Queue `bytes` behind what is pending, or write them now when nothing is. Never throws. */
  write(bytes: Uint8Array): void {
    if (this.closed || bytes.length === 0) return;
    if (this.pending.length === 0) {
      const written = this.attempt(bytes);
      if (written === bytes.length || this.closed) return;
      // The caller's bytes may be a view it reuses: what waits is a copy.
      this.pending.push(Buffer.from(bytes.subarray(written)));
      this.schedule();
      return;
    }
    this.pending.push(Buffer.from(bytes));
  }

  /** Resolves once nothing is pending: written, or dropped because the terminal closed. */
  drained(): Promise<void> {
    if (this.pending.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** The terminal is gone (or handed on): what is pending is dropped, and nothing is written any more. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.pending.length = 0;
    this.unschedule();
    this.settle();
  }

  /** How many bytes of `bytes` the kernel took now; on an error other than EAGAIN the queue closes. */
  private attempt(bytes: Uint8Array): number {
    if (!this.isOpen()) {
      this.close();
      return 0;
    }
    const result = this.writeSome(bytes);
    if (result >= 0) return result;
    if (result !== EAGAIN) this.close(); // EIO, EBADF: the program's side is gone for good
    return 0;
  }

  private flush(): void {
    this.scheduled = null;
    let progressed = false;
    while (!this.closed && this.pending.length > 0) {
      const head = this.pending[0]!;
      const written = this.attempt(head);
      if (written > 0) progressed = true;
      if (written < head.length) {
        if (written > 0) this.pending[0] = head.subarray(written);
        break;
      }
      this.pending.shift();
    }
    if (this.closed) return;
    if (this.pending.length === 0) {
      this.refusals = 0;
      this.settle();
      return;
    }
    this.refusals = progressed ? 0 : this.refusals + 1;
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled !== null) return;
    if (this.refusals < PTY_WRITE_QUICK_RETRIES) {
      this.scheduled = { immediate: setImmediate(() => this.flush()) };
      return;
    }
    const doublings = this.refusals - PTY_WRITE_QUICK_RETRIES;
    const delay = Math.min(PTY_WRITE_MAX_BACKOFF_MS, PTY_WRITE_FIRST_BACKOFF_MS * 2 ** Math.min(doublings, 8));
    this.scheduled = { timer: setTimeout(() => this.flush(), delay) };
  }

  private unschedule(): void {
    if (this.scheduled === null) return;
    if ("immediate" in this.scheduled) clearImmediate(this.scheduled.immediate);
    else clearTimeout(this.scheduled.timer);
    this.scheduled = null;
  }

  private settle(): void {
    for (const resolve of this.waiters.splice(0)) resolve();
  }
}
