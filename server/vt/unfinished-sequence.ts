/**
 * What follows a snapshot made while the output ends inside a sequence (docs/design.md § Snapshots):
 * a snapshot is written into a terminal at ground, but the terminal it was made from may sit inside
 * an escape sequence (`ESC [ 3` of a colour, half an OSC title) or a UTF-8 character (two bytes of
 * 漢). Its screen does not show that sequence yet, so the snapshot stands for the state up to the
 * sequence's start, and the sequence's bytes follow it: a terminal that parses both ends in the state
 * of the one the snapshot was made from, and reads the rest of the sequence as that one does.
 */

/** Longest unfinished sequence carried after a snapshot: far longer than any CSI, ESC or title, shorter
 * than an image or clipboard transfer caught halfway, whose rest reaches the client raw instead. */
export const MAX_UNFINISHED_SEQUENCE_BYTES = 256 * 1024;

/** Bytes a stream can end with inside one UTF-8 character: a lead byte and two continuation bytes. */
export const MAX_UNFINISHED_UTF8_BYTES = 3;

/** The escape sequence a stream ends inside, as `EscapeSequenceMachine.unfinishedSequence` reports it. */
export type UnfinishedSequence = { bytes: number; executesControls: boolean };

/**
 * The bytes to write after a snapshot of the terminal that read `recent` last: the unfinished
 * escape sequence (`sequence`, from the scanner that read the same stream) or, at ground, the
 * unfinished UTF-8 character `recent` ends with. `recent` holds at least the sequence's bytes (or
 * MAX_UNFINISHED_UTF8_BYTES); empty when nothing is unfinished or the sequence cannot be carried.
 *
 * Inside ESC and CSI a terminal executes C0 controls as it reads them (a line feed in the middle of
 * `ESC [ 3 1 m`): the snapshot already shows their effect, so they are left out here.
 */
export function unfinishedTail(recent: Uint8Array, sequence: UnfinishedSequence): Uint8Array {
  const n = recent.length;
  if (sequence.bytes > 0) {
    if (sequence.bytes > n || sequence.bytes > MAX_UNFINISHED_SEQUENCE_BYTES) return new Uint8Array(0);
    const bytes = recent.subarray(n - sequence.bytes);
    if (!sequence.executesControls) return bytes.slice();
    // The first byte is the sequence's ESC.
    return Uint8Array.from(bytes.filter((b, i) => i === 0 || b >= 0x20));
  }
  for (let k = 1; k <= Math.min(MAX_UNFINISHED_UTF8_BYTES, n); k++) {
    const b = recent[n - k]!;
    if ((b & 0xc0) === 0x80) continue; // a continuation byte: its lead is further back
    const length = (b & 0xe0) === 0xc0 ? 2 : (b & 0xf0) === 0xe0 ? 3 : (b & 0xf8) === 0xf0 ? 4 : 1;
    return length > k ? recent.slice(n - k) : new Uint8Array(0);
  }
  return new Uint8Array(0);
}

/** `snapshot` followed by `tail`, as one payload. */
export function followedBy(snapshot: string, tail: Uint8Array): string | Uint8Array {
  if (tail.length === 0) return snapshot;
  const head = new TextEncoder().encode(snapshot);
  const out = new Uint8Array(head.length + tail.length);
  out.set(head);
  out.set(tail, head.length);
  return out;
}
