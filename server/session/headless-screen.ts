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

/** A partial batch is posted once output has paused this long. Whoever looks at the mirror
 * (snapshot, read, preview) flushes first, so nobody sees it late; the wait only decides when the
 * worker wakes: in the pauses of output rather than in its middle. A parse that wakes the worker
 * while keys are echoing back to back competes with the echo's path for two cores and shows in the
 * echo's tail; typing at a human pace (a key every ~100 ms) still posts each key once it settles
 * (docs/design.md § Where a keystroke's echo goes). */
export const FLUSH_DELAY_MS = 50;

/** …but output that never pauses is posted at least this often, so the session list's preview
 * (refreshed at most every 250 ms) keeps up with a slow, steady log. */
export const FLUSH_MAX_DELAY_MS = 250;

/** First allocation of a pending batch: a typical PTY read, so an echo does not cost 64 KiB. */
const MIN_BATCH_ALLOC_BYTES = 4 * 1024;

/** Bytes posted but not yet parsed beyond which output is dropped: ~0.2 s of a 40 MB/s
 * parser, and well under xterm's own 50 MB write-queue limit. */
export const MAX_BACKLOG_BYTES = 8 * 1024 * 1024;

/** After dropping, posting resumes once the backlog is under this (hysteresis, so a
 * saturated PTY gives long parsed stretches rather than many tiny gaps). */
export const RESUME_BACKLOG_BYTES = MAX_BACKLOG_BYTES / 2;

/** Sustained parsing the mirror may cost: about a tenth of a core. Past it (`cat` of a huge log)
 * the mirror skims: it keeps only the output's tail and refreshes from it, leaving the CPU to
 * the program and the clients. */
export const PARSE_BUDGET_BYTES_PER_SEC = 6 * 1024 * 1024;

/** Bursts up to this parse in full: a TUI's full repaint is a few hundred KiB at most. */
export const PARSE_BURST_BYTES = 1024 * 1024;

/** While skimming, the mirror is rebuilt from the tail this often: the session list shows previews
 * at most every 2 s, and a request (snapshot, read) rebuilds it at once anyway. */
export const SKIM_REFRESH_MS = 2_000;

/** Output tail a skimming screen keeps of its own: several full screens of a large terminal. */
export const SKIM_TAIL_BYTES = 256 * 1024;

/** Output a skimmed mirror is rebuilt from when the session's ring can give it: the Agent API's
 * `read` may ask for 10 000 lines of scrollback, ~1 MiB of typical output; parsing it costs the
 * worker ~15–90 ms per refresh (every SKIM_REFRESH_MS while a flood lasts). */
export const RING_TAIL_BYTES = 1024 * 1024;

export type HeadlessScreenOptions = {
  cols: number;
  rows: number;
  scrollback?: number;
  /** the terminal modes in force, as escape sequences (the session's TerminalScanner); prefixed to a skimmed tail */
  modes?: () => string;
  /**
   * The last `maxBytes` (RING_TAIL_BYTES) of the output, from a session's ring that holds at least
   * that many, and whether earlier output was left out. A skimmed mirror is rebuilt from it, which
   * brings back what was parsed before the skim began too; without it the screen keeps a tail of
   * its own (SKIM_TAIL_BYTES) while it skims.
   */
  recentOutput?: (maxBytes: number) => { bytes: Uint8Array; cut: boolean };
  /** override PARSE_BUDGET_BYTES_PER_SEC / PARSE_BURST_BYTES (Infinity: never skim) */
  parseBudget?: { bytesPerSec: number; burstBytes: number };
};

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
  /** bytes that were only skimmed (kept as a tail) during floods */
  skimmedBytes: number;
  /** a flood is being skimmed right now: the mirror shows only the output's recent tail */
  skimming: boolean;
};

/** What a skimming mirror is rebuilt from: the output's tail. */
interface SkimTail {
  /** output came since the last take() */
  fresh: boolean;
  push(chunk: Uint8Array): void;
  /** The tail, starting after its first newline when it was cut (a cut line or sequence is noise). */
  take(): Uint8Array;
}

/** The tail taken from the session's ring when asked for: nothing is copied while output flows. */
class RingTail implements SkimTail {
  fresh = false;
  constructor(private readonly recent: (maxBytes: number) => { bytes: Uint8Array; cut: boolean }) {}

  push(): void {
    this.fresh = true;
  }

  take(): Uint8Array {
    this.fresh = false;
    const { bytes, cut } = this.recent(RING_TAIL_BYTES);
    return cut ? afterFirstNewline(bytes) : bytes;
  }
}

/** The last SKIM_TAIL_BYTES of output while skimming, for a screen without a ring. */
class TailBuffer implements SkimTail {
  private readonly data = new Uint8Array(SKIM_TAIL_BYTES);
  private end = 0;
  private filled = false;
  fresh = false;

  push(chunk: Uint8Array): void {
    this.fresh = true;
    if (chunk.length >= this.data.length) {
      this.data.set(chunk.subarray(chunk.length - this.data.length));
      this.end = 0;
      this.filled = true;
      return;
    }
    const first = Math.min(chunk.length, this.data.length - this.end);
    this.data.set(chunk.subarray(0, first), this.end);
    if (first < chunk.length) {
      this.data.set(chunk.subarray(first), 0);
      this.filled = true;
    }
    const next = (this.end + chunk.length) % this.data.length;
    if (next <= this.end && chunk.length > 0) this.filled = true;
    this.end = next;
  }

  take(): Uint8Array {
    this.fresh = false;
    const bytes = this.filled ? concat(this.data.subarray(this.end), this.data.subarray(0, this.end)) : this.data.slice(0, this.end);
    return this.filled ? afterFirstNewline(bytes) : bytes;
  }
}

/** A cut tail from after its first newline: the cut line, or a sequence cut in two, is noise. */
function afterFirstNewline(bytes: Uint8Array): Uint8Array {
  const newline = bytes.indexOf(0x0a);
  return newline === -1 ? bytes : bytes.subarray(newline + 1);
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

const utf8 = new TextEncoder();

export class HeadlessScreen {
  private host: HeadlessWorkerHost | null = null;
  private id = 0;
  private cols: number;
  private rows: number;
  private readonly scrollback: number;
  private pending: Uint8Array | null = null;
  private pendingLength = 0;
  /** the last batch went out full: output is flowing, so the next one starts at full size instead of growing by copies */
  private flowing = false;
  private flushTimer: ReturnType<typeof setTimeout> | null = null;
  /** when the first byte of the pending batch arrived (Date.now()) */
  private pendingSince = 0;
  private posted = 0;
  private parsed = 0;
  private dropped = 0;
  private gaps = 0;
  /** output is being discarded until the backlog is under RESUME_BACKLOG_BYTES */
  private dropping = false;
  /** the next batch must tell the worker that bytes are missing before it */
  private gapBeforeNext = false;
  private disposed = false;
  private readonly modes: () => string;
  /** parse budget left (token bucket), and when it was last refilled */
  private readonly budget: { bytesPerSec: number; burstBytes: number };
  private tokens: number;
  private tokensAt = Date.now();
  private skim: SkimTail | null = null;
  private readonly recentOutput: HeadlessScreenOptions["recentOutput"];
  private skimTimer: ReturnType<typeof setInterval> | null = null;
  private skimmed = 0;
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
    this.modes = opts.modes ?? (() => "");
    this.budget = opts.parseBudget ?? { bytesPerSec: PARSE_BUDGET_BYTES_PER_SEC, burstBytes: PARSE_BURST_BYTES };
    this.recentOutput = opts.recentOutput;
    this.tokens = this.budget.burstBytes;
    this.attached();
  }

  /** Hot path: copies the chunk into the pending batch; parsing happens in the worker. */
  write(chunk: Uint8Array): void {
    const length = chunk.byteLength;
    if (this.disposed || length === 0) return;
    this.tokens = this.refilledTokens() - length;
    this.tokensAt = Date.now();
    if (this.skim) {
      this.skim.push(chunk);
      this.skimmed += length;
      return;
    }
    if (this.tokens < 0) {
      this.startSkimming(chunk);
      return;
    }
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
      const n = Math.min(BATCH_BYTES - this.pendingLength, length - offset);
      this.ensurePendingRoom(this.pendingLength + n);
      this.pending!.set(n === length ? chunk : chunk.subarray(offset, offset + n), this.pendingLength);
      this.pendingLength += n;
      offset += n;
      if (this.pendingLength === BATCH_BYTES) {
        this.flowing = true;
        this.flush();
      }
    }
    if (this.pendingLength === 0) return;
    if (!this.flushTimer) {
      this.pendingSince = this.tokensAt;
      this.flushTimer = setTimeout(() => this.flush(), FLUSH_DELAY_MS);
      this.flushTimer.unref?.();
    } else if (this.tokensAt - this.pendingSince + FLUSH_DELAY_MS <= FLUSH_MAX_DELAY_MS) {
      // Restarts the quiet wait in place (no new timer), unless that would pass the longest wait.
      this.flushTimer.refresh();
    }
  }

  resize(cols: number, rows: number): void {
    if (this.disposed) return;
    this.refreshFromTail();
    this.flush();
    this.cols = cols;
    this.rows = rows;
    this.attached().post({ type: "resize", screen: this.id, cols, rows });
  }

  /** New generation: the bytes so far belong to the previous run; start a fresh terminal. */
  reset(): void {
    if (this.disposed) return;
    this.stopSkimming();
    this.discardPending();
    this.dropping = false;
    this.gapBeforeNext = false;
    this.attached().post({ type: "reset", screen: this.id });
  }

  /** The terminal's whole state — screen and scrollback (all of it unless `scrollback` limits the
   * lines), cursor, pen, scroll region, charsets, tab stops, both buffers, modes — as bytes that
   * recreate it in a freshly reset terminal (terminal-snapshot.js); answered after every byte
   * written so far is parsed. */
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
   * a wrap is pending after the last column. `styled`: lines carry their colours and
   * emphasis as SGR escapes (the Agent API's `strip_ansi: false`). */
  read(opts?: { scrollback?: number; styled?: boolean }): Promise<ReadResult> {
    const wanted = Math.floor(opts?.scrollback ?? 0);
    const scrollback = Math.max(0, Math.min(MAX_READ_SCROLLBACK_LINES, Number.isFinite(wanted) ? wanted : 0));
    return this.request({ kind: "read", scrollback, styled: opts?.styled ?? false });
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
      skimmedBytes: this.skimmed,
      skimming: this.skim !== null,
    };
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.stopSkimming();
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
    this.refreshFromTail();
    this.flush();
    return this.attached().request<K>(this.id, body);
  }

  /** The output outruns the parse budget: keep only its tail until it calms down. */
  private startSkimming(chunk: Uint8Array): void {
    this.flush();
    this.skim = this.recentOutput ? new RingTail(this.recentOutput) : new TailBuffer();
    this.skim.push(chunk);
    this.skimmed += chunk.length;
    this.skimTimer = setInterval(() => this.onSkimTick(), SKIM_REFRESH_MS);
    this.skimTimer.unref?.();
  }

  private onSkimTick(): void {
    const quiet = !this.skim?.fresh;
    this.refreshFromTail();
    // Calm again (budget refilled, or nothing new): parse in full from here on.
    if (quiet || this.refilledTokens() > this.budget.burstBytes / 2) this.stopSkimming();
  }

  /** The parse budget as of now (token bucket). */
  private refilledTokens(): number {
    const { bytesPerSec, burstBytes } = this.budget;
    if (bytesPerSec === Infinity) return Infinity;
    return Math.min(burstBytes, this.tokens + ((Date.now() - this.tokensAt) * bytesPerSec) / 1000);
  }

  /** Rebuild the mirror from the modes and the tail: a reset, then the recent output. */
  private refreshFromTail(): void {
    if (!this.skim?.fresh) return;
    const tail = this.skim.take();
    const modes = utf8.encode(this.modes());
    const data = concat(modes, tail);
    this.discardPending();
    this.gaps++;
    this.posted += data.byteLength;
    this.attached().post({ type: "write", screen: this.id, data, gap: true }, [data.buffer as ArrayBuffer]);
  }

  private stopSkimming(): void {
    if (this.skimTimer) clearInterval(this.skimTimer);
    this.skimTimer = null;
    this.skim = null;
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
    if (this.pendingLength < BATCH_BYTES) this.flowing = false;
    let data = this.pendingLength === this.pending.length ? this.pending : this.pending.slice(0, this.pendingLength);
    // Released rather than reused: an idle screen then holds no batch buffer at all.
    this.pending = null;
    this.pendingLength = 0;
    const gap = this.gapBeforeNext;
    this.gapBeforeNext = false;
    // The worker starts clean after a gap: the modes the program set come back first, as after a skim.
    if (gap) data = concat(utf8.encode(this.modes()), data);
    this.posted += data.byteLength;
    this.attached().post({ type: "write", screen: this.id, data, gap }, [data.buffer as ArrayBuffer]);
  }

  /**
   * The pending batch grows as needed: an isolated echo costs a small buffer; in a flood (the last
   * batch went out full) each batch is allocated at full size at once, without the copies of growing.
   */
  private ensurePendingRoom(needed: number): void {
    if (this.pending && this.pending.length >= needed) return;
    const size = this.flowing ? BATCH_BYTES : Math.min(BATCH_BYTES, Math.max(needed, MIN_BATCH_ALLOC_BYTES, (this.pending?.length ?? 0) * 2));
    const grown = new Uint8Array(size);
    if (this.pending) grown.set(this.pending.subarray(0, this.pendingLength));
    this.pending = grown;
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
