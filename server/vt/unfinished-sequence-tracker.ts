/**
 * Follows a stream and knows the bytes of the sequence it ends inside (docs/design.md § Snapshots:
 * a snapshot made there is followed by them). The browser runs one on what it writes to xterm, so
 * its stored copy carries them as the server's snapshots do, and a reload that paints the copy reads
 * the rest of the sequence (the start of the `append`) as the terminal that saved it did.
 *
 * It runs on every output chunk: the shared machine skips text with `indexOf`, and at ground only
 * the last few bytes (an unfinished UTF-8 character) are kept.
 */
import { EscapeSequenceMachine } from "./escape-sequence-machine.ts";
import { MAX_UNFINISHED_SEQUENCE_BYTES, MAX_UNFINISHED_UTF8_BYTES, unfinishedTail } from "./unfinished-sequence.ts";

export class UnfinishedSequenceTracker extends EscapeSequenceMachine {
  /** the last `length` bytes fed: the unfinished sequence so far, or at ground the last few bytes */
  private kept = new Uint8Array(64);
  private length = 0;

  constructor() {
    // Nothing is collected: every OSC and DCS is skipped to its end.
    super({ payloadBytes: 0, collectDcs: false });
  }

  /** The stream goes on with `chunk`. */
  feed(chunk: Uint8Array): void {
    this.run(chunk);
    const n = chunk.length;
    const { bytes } = this.unfinishedSequence();
    const keep = bytes > 0 ? bytes : MAX_UNFINISHED_UTF8_BYTES;
    if (keep > MAX_UNFINISHED_SEQUENCE_BYTES) {
      this.length = 0; // not carried: `tail` is empty until the sequence ends
      return;
    }
    const fromKept = keep > n ? Math.min(this.length, keep - n) : 0;
    const fromChunk = Math.min(n, keep);
    const length = fromKept + fromChunk;
    if (length > this.kept.length) {
      const grown = new Uint8Array(Math.max(length, 2 * this.kept.length));
      grown.set(this.kept.subarray(this.length - fromKept, this.length));
      this.kept = grown;
    } else {
      this.kept.copyWithin(0, this.length - fromKept, this.length);
    }
    this.kept.set(chunk.subarray(n - fromChunk), fromKept);
    this.length = length;
  }

  /** The bytes to write after a snapshot of a terminal that parsed what was fed (empty if none). */
  tail(): Uint8Array {
    return unfinishedTail(this.kept.subarray(0, this.length), this.unfinishedSequence());
  }

  /** Back to ground, as for a fresh terminal. */
  reset(): void {
    this.resetMachine();
    this.length = 0;
  }
}
