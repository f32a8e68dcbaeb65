/** Most output kept per command: beyond it the oldest bytes go (the end of a long log matters most). */
export const MAX_COMMAND_OUTPUT_BYTES = 16 * 1024 * 1024;

/** The bytes one command printed, in order, bounded by keeping the newest. */
export class OutputCapture {
  private chunks: Uint8Array[] = [];
  private size = 0;
  /** bytes dropped from the front */
  dropped = 0;

  constructor(private readonly maxBytes = MAX_COMMAND_OUTPUT_BYTES) {}

  append(bytes: Uint8Array): void {
    if (bytes.length === 0 || this.maxBytes === 0) return;
    // Copy: the PTY may reuse its buffer.
    this.chunks.push(Uint8Array.from(bytes));
    this.size += bytes.length;
    while (this.size > this.maxBytes && this.chunks.length > 0) {
      const first = this.chunks[0]!;
      const excess = this.size - this.maxBytes;
      if (first.length <= excess) {
        this.chunks.shift();
        this.size -= first.length;
        this.dropped += first.length;
      } else {
        this.chunks[0] = first.subarray(excess);
        this.size -= excess;
        this.dropped += excess;
      }
    }
  }

  get byteLength(): number {
    return this.size;
  }

  /** The bytes as text (invalid UTF-8 becomes U+FFFD; a character cut by the bound is dropped). */
  text(): string {
    return Buffer.concat(this.chunks).toString("utf8");
  }
}
