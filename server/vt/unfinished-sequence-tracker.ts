/**
 * Follows a stream and knows the bytes of the sequence it ends inside (docs/design.md § Snapshots:
 * a snapshot made there is followed by them). The browser runs one on what it writes to xterm, so
 * its stored copy carries them as the server's snapshots do, and a reload that paints the copy reads
 * the rest of the sequence (the start of the `append`) as the terminal that saved it did.
 *
 * It runs on every output chunk, so a chunk costs one native `lastIndexOf(ESC)` and a copy of the
 * bytes after that ESC; the shared escape-sequence machine runs only when the tail is asked for (a
 * save), over those bytes. That is exact because an ESC begins a new sequence in every state of the
 * machine (inside an OSC or DCS it ends the string, and `ESC \` returns to ground as an ST does), so
 * where the stream ends depends only on the bytes from its last ESC on.
 */
import { ESC } from "./control-bytes.ts";
import { EscapeSequenceMachine } from "./escape-sequence-machine.ts";
import { MAX_UNFINISHED_SEQUENCE_BYTES, MAX_UNFINISHED_UTF8_BYTES, unfinishedTail } from "./unfinished-sequence.ts";

/** The machine alone: only where sequences begin and end matters, nothing is collected or parsed. */
class SequenceBounds extends EscapeSequenceMachine {
  constructor() {
    super({ payloadBytes: 0, collectDcs: false });
  }
  protected override csiWantsParams(): boolean {
    return false;
  }
  feed(chunk: Uint8Array): void {
    this.run(chunk);
  }
  atGround(): boolean {
    return this.unfinishedSequence().bytes === 0;
  }
}

export class UnfinishedSequenceTracker {
  /** the bytes fed since the last ESC (that ESC first), while they are at most MAX_UNFINISHED_SEQUENCE_BYTES */
  private sinceEsc = new Uint8Array(64);
  private sinceEscLength = 0;
  private escSeen = false;
  /** more than MAX_UNFINISHED_SEQUENCE_BYTES followed the last ESC: a machine follows them until it is at ground */
  private long: SequenceBounds | null = null;
  /** the last bytes fed, for a UTF-8 character unfinished at ground */
  private readonly last = new Uint8Array(MAX_UNFINISHED_UTF8_BYTES);
  private lastLength = 0;

  /** The stream goes on with `chunk`. */
  feed(chunk: Uint8Array): void {
    const n = chunk.length;
    if (n === 0) return;
    this.keepLast(chunk);
    const esc = chunk.lastIndexOf(ESC);
    if (esc >= 0) {
      this.escSeen = true;
      this.long = null;
      this.sinceEscLength = 0;
      this.append(chunk.subarray(esc));
    } else if (this.long) {
      if (!this.long.atGround()) this.long.feed(chunk); // at ground it stays there: only an ESC leaves it
    } else if (this.escSeen) {
      this.append(chunk);
    }
  }

  /** The bytes to write after a snapshot of a terminal that parsed what was fed (empty if none). */
  tail(): Uint8Array {
    const last = this.last.subarray(0, this.lastLength);
    const atGround = { bytes: 0, executesControls: false };
    if (!this.escSeen) return unfinishedTail(last, atGround);
    if (this.long) return this.long.atGround() ? unfinishedTail(last, atGround) : new Uint8Array(0);
    const recent = this.sinceEsc.subarray(0, this.sinceEscLength);
    const bounds = new SequenceBounds();
    bounds.feed(recent);
    return unfinishedTail(recent, bounds.unfinishedSequence());
  }

  private append(bytes: Uint8Array): void {
    const length = this.sinceEscLength + bytes.length;
    if (length > MAX_UNFINISHED_SEQUENCE_BYTES) {
      const long = new SequenceBounds();
      long.feed(this.sinceEsc.subarray(0, this.sinceEscLength));
      long.feed(bytes);
      this.long = long;
      this.sinceEscLength = 0;
      return;
    }
    if (length > this.sinceEsc.length) {
      const grown = new Uint8Array(Math.max(length, 2 * this.sinceEsc.length));
      grown.set(this.sinceEsc.subarray(0, this.sinceEscLength));
      this.sinceEsc = grown;
    }
    this.sinceEsc.set(bytes, this.sinceEscLength);
    this.sinceEscLength = length;
  }

  private keepLast(chunk: Uint8Array): void {
    const n = chunk.length;
    const max = MAX_UNFINISHED_UTF8_BYTES;
    if (n >= max) {
      this.last.set(chunk.subarray(n - max));
      this.lastLength = max;
      return;
    }
    const fromLast = Math.min(this.lastLength, max - n);
    this.last.copyWithin(0, this.lastLength - fromLast, this.lastLength);
    this.last.set(chunk, fromLast);
    this.lastLength = fromLast + n;
  }
}
