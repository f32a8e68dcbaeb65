/**
 * A session's mirror of its screen, kept in an @xterm/headless terminal that lives in
 * the shared worker thread (headless-worker.js), so parsing PTY output costs the main
 * thread only a memcpy. It serves reset snapshots after ring truncation (`serialize`),
 * the session list's `preview`, and the Agent API's `read`.
 *
 * The mirror is best effort: the ring buffer is the truth. When the worker falls
 * behind, output is dropped rather than queued without bound, the worker resets the
 * terminal, and the screen heals on the program's next redraw.
 *
 * Bytes are always forwarded as bytes and parsed by one terminal per screen, so UTF-8
 * sequences split across PTY chunks come out intact.
 */
import {
  HeadlessScreenError,
  HeadlessWorkerHost,
  type ScreenClient,
} from "./headless-worker-host.ts";
import type { ReadResult, ScreenReply, ScreenRequest } from "./headless-protocol.ts";

export { HeadlessScreenError, type HeadlessScreenErrorCode } from "./headless-worker-host.ts";
export type { ReadResult } from "./headless-protocol.ts";

/** Lines of history kept: the Agent API's `read` may ask for up to 10 000 lines. */
export const DEFAULT_SCROLLBACK_LINES = 10_000;

/** Most scrollback lines one `read` returns (the Agent API's limit). */
export const MAX_READ_SCROLLBACK_LINES = 10_000;

/** Bytes per message to the worker: at 60 MB/s this is ~1000 messages/s, so the per-message
 * cost stays negligible while one batch still parses in about a millisecond. */
export const BATCH_BYTES = 64 * 1024;

/** A partial batch waits at most this long: short enough that an echo reaches the mirror
 * before anyone can look, long enough to coalesce the many small chunks of a busy PTY. */
export const FLUSH_DELAY_MS = 4;

/** Bytes posted but not yet parsed beyond which output is dropped: ~0.2 s of a 40 MB/s
 * parser, and well under xterm's own 50 MB write-queue limit. */
export const MAX_BACKLOG_BYTES = 8 * 1024 * 1024;

/** After dropping, posting resumes once the backlog is under this (hysteresis, so a
 * saturated PTY gives long parsed stretches rather than many tiny gaps). */
export const RESUME_BACKLOG_BYTES = MAX_BACKLOG_BYTES / 2;

export type HeadlessScreenOptions = { cols: number; rows: number; scrollback?: number };

export type HeadlessScreenStats = {
  /** bytes sent to the worker */
  postedBytes: number;
  /** of those, bytes the worker has parsed */
  parsedBytes: number;
  /** bytes accepted by write() but not yet sent */
  pendingBytes: number;
  /** bytes write() discarded because the worker was behind */
  droppedBytes: number;
  /** times the mirror lost output and had to reset */
  gaps: number;
};

export class HeadlessScreen {
  private host: HeadlessWorkerHost | null = null;
  private id = 0;
  private cols: number;
  private rows: number;
  private readonly scrollback: number;
  private pending: Uint8Array | null = null;
  private pendingLength = 0;
  private flushTimer: ReturnType<typeof setTimeout> | null = null;
  private posted = 0;
  private parsed = 0;
  private dropped = 0;
  private gaps = 0;
  /** output is being discarded until the backlog is under RESUME_BACKLOG_BYTES */
  private dropping = false;
  /** the next batch must tell the worker that bytes are missing before it */
  private gapBeforeNext = false;
  private disposed = false;
  private readonly listeners = new Set<() => void>();
  private readonly client: ScreenClient = {
    onParsed: (bytes) => {
      this.parsed += bytes;
    },
    onChanged: () => {
      for (const listener of [...this.listeners]) listener();
    },
    onWorkerLost: () => {
      // The terminal died with the worker; the next use attaches a blank one.
      this.host = null;
      this.posted = this.parsed = 0;
      this.gapBeforeNext = false;
    },
  };

  /** Worker threads currently alive for headless screens (0 or 1 in steady state). */
  static workerCount(): number {
    return HeadlessWorkerHost.liveWorkers();
  }

  constructor(opts: HeadlessScreenOptions) {
    this.cols = opts.cols;
    this.rows = opts.rows;
    this.scrollback = opts.scrollback ?? DEFAULT_SCROLLBACK_LINES;
    this.attached();
  }

  /** Hot path: copies the chunk into the pending batch; parsing happens in the worker. */
  write(chunk: Uint8Array): void {
    const length = chunk.byteLength;
    if (this.disposed || length === 0) return;
    const backlog = this.posted - this.parsed;
    if (this.dropping) {
      if (backlog > RESUME_BACKLOG_BYTES) {
        this.dropped += length;
        return;
      }
      this.dropping = false;
    }
    if (backlog + this.pendingLength + length > MAX_BACKLOG_BYTES) {
      this.dropped += this.pendingLength + length;
      this.discardPending();
      this.dropping = true;
      if (!this.gapBeforeNext) this.gaps++;
      this.gapBeforeNext = true;
      return;
    }
    let offset = 0;
    while (offset < length) {
      this.pending ??= new Uint8Array(BATCH_BYTES);
      const n = Math.min(BATCH_BYTES - this.pendingLength, length - offset);
      this.pending.set(n === length ? chunk : chunk.subarray(offset, offset + n), this.pendingLength);
      this.pendingLength += n;
      offset += n;
      if (this.pendingLength === BATCH_BYTES) this.flush();
    }
    if (this.pendingLength > 0 && !this.flushTimer) {
      this.flushTimer = setTimeout(() => this.flush(), FLUSH_DELAY_MS);
      this.flushTimer.unref?.();
    }
  }

  resize(cols: number, rows: number): void {
    if (this.disposed) return;
    this.flush();
    this.cols = cols;
    this.rows = rows;
    this.attached().post({ type: "resize", screen: this.id, cols, rows });
  }

  /** New generation: the bytes so far belong to the previous run; start a fresh terminal. */
  reset(): void {
    if (this.disposed) return;
    this.discardPending();
    this.dropping = false;
    this.gapBeforeNext = false;
    this.attached().post({ type: "reset", screen: this.id });
  }

  /** Screen and scrollback (all of it unless `scrollback` limits the lines) as escape
   * sequences that recreate them; answered after every byte written so far is parsed. */
  serialize(opts?: { scrollback?: number }): Promise<string> {
    const scrollback = opts?.scrollback;
    return this.request({ kind: "serialize", ...(scrollback === undefined ? {} : { scrollback }) });
  }

  /** The last ≤ 3 non-empty lines of the visible screen, right-trimmed. */
  preview(): Promise<string[]> {
    return this.request({ kind: "preview" });
  }

  /** Visible rows, the last `scrollback` lines of history (default 0, at most
   * MAX_READ_SCROLLBACK_LINES) and the 0-based cursor; `cursor.col` may equal cols when
   * a wrap is pending after the last column. */
  read(opts?: { scrollback?: number }): Promise<ReadResult> {
    const wanted = Math.floor(opts?.scrollback ?? 0);
    const scrollback = Math.max(0, Math.min(MAX_READ_SCROLLBACK_LINES, Number.isFinite(wanted) ? wanted : 0));
    return this.request({ kind: "read", scrollback });
  }

  /** Called (at most about every 250 ms) after the visible text changed. */
  onChange(listener: () => void): () => void {
    const wrapped = () => listener();
    this.listeners.add(wrapped);
    return () => this.listeners.delete(wrapped);
  }

  stats(): HeadlessScreenStats {
    return {
      postedBytes: this.posted,
      parsedBytes: this.parsed,
      pendingBytes: this.pendingLength,
      droppedBytes: this.dropped,
      gaps: this.gaps,
    };
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.discardPending();
    this.listeners.clear();
    this.host?.detach(this.id);
    this.host = null;
  }

  private request<K extends ScreenRequest["kind"]>(
    body: Extract<ScreenRequest, { kind: K }>,
  ): Promise<ScreenReply[K]> {
    if (this.disposed) {
      return Promise.reject(new HeadlessScreenError("HEADLESS_SCREEN_DISPOSED", "screen disposed"));
    }
    this.flush();
    return this.attached().request<K>(this.id, body);
  }

  private attached(): HeadlessWorkerHost {
    if (!this.host) {
      const { host, screen } = HeadlessWorkerHost.attach(this.client, {
        cols: this.cols,
        rows: this.rows,
        scrollback: this.scrollback,
      });
      this.host = host;
      this.id = screen;
    }
    return this.host;
  }

  private flush(): void {
    if (this.flushTimer) {
      clearTimeout(this.flushTimer);
      this.flushTimer = null;
    }
    if (this.pendingLength === 0 || !this.pending) return;
    const data = this.pendingLength === BATCH_BYTES ? this.pending : this.pending.slice(0, this.pendingLength);
    // Released rather than reused: an idle screen then holds no batch buffer at all.
    this.pending = null;
    this.pendingLength = 0;
    const gap = this.gapBeforeNext;
    this.gapBeforeNext = false;
    this.posted += data.byteLength;
    this.attached().post({ type: "write", screen: this.id, data, gap }, [data.buffer as ArrayBuffer]);
  }

  private discardPending(): void {
    if (this.flushTimer) {
      clearTimeout(this.flushTimer);
      this.flushTimer = null;
    }
    this.pending = null;
    this.pendingLength = 0;
  }
}
