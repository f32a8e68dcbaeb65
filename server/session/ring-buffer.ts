/**
 * The replay ring of one session generation: the most recent raw PTY output bytes,
 * addressed by absolute offsets (bytes since the generation began), never decoded.
 *
 * The backing store starts small and doubles, so an idle session costs kilobytes, not the full
 * ring; past STORE_DOUBLING_LIMIT_BYTES it goes to `capacity` at once; once there it wraps.
 */

/** Default replay ring per session (`--buffer-bytes`): enough for a few screens of a busy TUI plus a long scrollback. */
export const DEFAULT_BUFFER_BYTES = 4 * 1024 * 1024;

/** First allocation of the backing store: a shell prompt and a few commands fit without growing. */
export const INITIAL_STORE_BYTES = 16 * 1024;

/**
 * Past this the store goes straight to capacity: output that outgrew a few screens is a flood as a
 * rule, and each further doubling would copy everything again into memory touched for the first
 * time (a page fault per 4 KiB, ~11 µs each on a VM). A fresh store's untouched pages cost nothing
 * until written, so the ring's resident size still follows the bytes it holds.
 */
export const STORE_DOUBLING_LIMIT_BYTES = 256 * 1024;

const EMPTY = new Uint8Array(0);

export class RingBuffer {
  /** Maximum bytes retained. */
  readonly capacity: number;
  /** Backing store; its length doubles to STORE_DOUBLING_LIMIT_BYTES, then becomes `capacity`. */
  private store: Uint8Array = EMPTY;
  /** Physical index in `store` of the byte at absolute offset `start`. */
  private head = 0;
  /** Retained bytes: `end - start`. */
  private length = 0;
  private endOffset = 0;

  constructor(capacity: number = DEFAULT_BUFFER_BYTES) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) {
      throw new RangeError(`ring buffer capacity must be a positive integer, got ${capacity}`);
    }
    this.capacity = capacity;
  }

  /** Absolute offset of the oldest retained byte. */
  get start(): number {
    return this.endOffset - this.length;
  }

  /** Total bytes appended since the generation began. */
  get end(): number {
    return this.endOffset;
  }

  /** Whether the earliest output of this generation has been overwritten. */
  get truncated(): boolean {
    return this.start > 0;
  }

  /** Whether `offset` is a position a reader can resume from: in [start, end]. */
  has(offset: number): boolean {
    return Number.isInteger(offset) && offset >= this.start && offset <= this.endOffset;
  }

  append(chunk: Uint8Array): void {
    const n = chunk.length;
    if (n === 0) return;
    if (n >= this.capacity) {
      // Only the tail survives; everything retained before is overwritten.
      this.length = 0;
      this.ensureStore(this.capacity);
      this.store.set(chunk.subarray(n - this.capacity));
      this.head = 0;
      this.length = this.capacity;
      this.endOffset += n;
      return;
    }
    const needed = this.length + n;
    if (needed > this.store.length) this.ensureStore(needed);
    if (needed > this.store.length) {
      // The store is at capacity: drop the oldest bytes to make room.
      const drop = needed - this.store.length;
      this.head = (this.head + drop) % this.store.length;
      this.length -= drop;
    }
    this.writeAt((this.head + this.length) % this.store.length, chunk);
    this.length += n;
    this.endOffset += n;
  }

  /**
   * The last `n` bytes appended as a view of the store instead of a copy, when they lie in one
   * piece and no write touches them for at least `untouchedFor` more appended bytes; else null.
   * Growing and reset replace the store and leave the old one as it was, so only wrapping writes
   * over a view.
   */
  lastAppended(n: number, untouchedFor: number): Uint8Array | null {
    if (n <= 0 || n > this.length || this.capacity - n < untouchedFor) return null;
    const size = this.store.length;
    const at = (this.head + this.length - n) % size;
    return at + n <= size ? this.store.subarray(at, at + n) : null;
  }

  /** A copy of the absolute range [from, to); throws RangeError outside [start, end]. */
  slice(from: number, to: number = this.endOffset): Uint8Array {
    if (!Number.isInteger(from) || !Number.isInteger(to) || from < this.start || to > this.endOffset || from > to) {
      throw new RangeError(`slice [${from}, ${to}) is outside the retained range [${this.start}, ${this.endOffset})`);
    }
    const out = new Uint8Array(to - from);
    if (out.length === 0) return out;
    const size = this.store.length;
    const first = (this.head + (from - this.start)) % size;
    const firstLen = Math.min(out.length, size - first);
    out.set(this.store.subarray(first, first + firstLen));
    if (firstLen < out.length) out.set(this.store.subarray(0, out.length - firstLen), firstLen);
    return out;
  }

  /** Hold `bytes` as the range [start, start + bytes.length) (a run taken over from the session host); only the tail if it is longer than the ring. */
  restore(start: number, bytes: Uint8Array): void {
    if (!Number.isSafeInteger(start) || start < 0) throw new RangeError(`bad ring start ${start}`);
    this.reset();
    this.endOffset = start;
    this.append(bytes);
  }

  /** Start a new generation: offsets back to 0, nothing retained, the store released. */
  reset(): void {
    this.store = EMPTY;
    this.head = 0;
    this.length = 0;
    this.endOffset = 0;
  }

  /** Grow the store (doubling, then to capacity) so it can hold at least `needed` bytes, unwrapping its contents. */
  private ensureStore(needed: number): void {
    const old = this.store;
    if (old.length >= Math.min(needed, this.capacity)) return;
    let size = Math.max(old.length, INITIAL_STORE_BYTES);
    while (size < needed) size *= 2;
    if (size > STORE_DOUBLING_LIMIT_BYTES) size = this.capacity;
    // A Buffer, so that the views it hands on are Buffers too: the scanner skips text with
    // `indexOf`, which is memchr on a Buffer and an element-by-element loop on a plain Uint8Array
    // (~20× slower: a third of a millisecond per MiB of output).
    const next = Buffer.alloc(Math.min(size, this.capacity));
    if (this.length > 0) {
      const firstLen = Math.min(this.length, old.length - this.head);
      next.set(old.subarray(this.head, this.head + firstLen));
      if (firstLen < this.length) next.set(old.subarray(0, this.length - firstLen), firstLen);
    }
    this.store = next;
    this.head = 0;
  }

  /** Copy `chunk` (shorter than the store) into the store at physical index `at`, wrapping at its end. */
  private writeAt(at: number, chunk: Uint8Array): void {
    const size = this.store.length;
    const firstLen = Math.min(chunk.length, size - at);
    this.store.set(firstLen === chunk.length ? chunk : chunk.subarray(0, firstLen), at);
    if (firstLen < chunk.length) this.store.set(chunk.subarray(firstLen), 0);
  }
}
