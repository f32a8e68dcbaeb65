/**
 * Bracketed paste (DEC private mode 2004): text the program should take as one paste, not as typed
 * keys, goes between `ESC [ 200 ~` and `ESC [ 201 ~` (docs/protocol.md § Submissions). A marker
 * inside the text would let pasted text escape the paste and run as typed keys, so every start and
 * end marker is removed first — again and again, since removing one can join the bytes around it
 * into a new one (`ESC [ 20` + marker + `1 ~`). The one helper for submissions, the Agent API's
 * send and a typed command line. Pure: no node:, Bun or DOM.
 */

export const PASTE_START = "\x1b[200~";
export const PASTE_END = "\x1b[201~";

const START_BYTES = [0x1b, 0x5b, 0x32, 0x30, 0x30, 0x7e];
/** The byte that tells the end marker from the start marker (`1` instead of `0`). */
const END_DIGIT = 0x31;
const MARKER_LENGTH = START_BYTES.length;

/** Text with no paste marker left in it. */
export function stripPasteMarkers(text: string): string {
  let out = text;
  while (out.includes(PASTE_START) || out.includes(PASTE_END)) out = out.split(PASTE_START).join("").split(PASTE_END).join("");
  return out;
}

/** `text` as one bracketed paste. */
export function bracketPasteText(text: string): string {
  return `${PASTE_START}${stripPasteMarkers(text)}${PASTE_END}`;
}

function markerAt(bytes: Uint8Array, i: number): boolean {
  if (i + MARKER_LENGTH > bytes.length) return false;
  for (let k = 0; k < MARKER_LENGTH; k++) {
    const b = bytes[i + k];
    if (b !== START_BYTES[k] && !(k === 4 && b === END_DIGIT)) return false;
  }
  return true;
}

/** Bytes with no paste marker left in them; other bytes (invalid UTF-8 included) stay as they are. */
export function stripPasteMarkerBytes(bytes: Uint8Array): Uint8Array {
  let current = bytes;
  for (;;) {
    const kept: Uint8Array[] = [];
    let from = 0;
    for (let i = current.indexOf(0x1b); i >= 0; i = current.indexOf(0x1b, i + 1)) {
      if (i < from || !markerAt(current, i)) continue;
      kept.push(current.subarray(from, i));
      from = i + MARKER_LENGTH;
    }
    if (kept.length === 0) return current;
    kept.push(current.subarray(from));
    const joined = new Uint8Array(kept.reduce((n, part) => n + part.length, 0));
    let at = 0;
    for (const part of kept) {
      joined.set(part, at);
      at += part.length;
    }
    current = joined;
  }
}

const START_ENCODED = Uint8Array.from(START_BYTES);
const END_ENCODED = Uint8Array.from(START_BYTES.map((b, k) => (k === 4 ? END_DIGIT : b)));

/** `body` as one bracketed paste, byte for byte otherwise. */
export function bracketPasteBytes(body: Uint8Array): Uint8Array {
  const clean = stripPasteMarkerBytes(body);
  const out = new Uint8Array(MARKER_LENGTH + clean.length + MARKER_LENGTH);
  out.set(START_ENCODED, 0);
  out.set(clean, MARKER_LENGTH);
  out.set(END_ENCODED, MARKER_LENGTH + clean.length);
  return out;
}
