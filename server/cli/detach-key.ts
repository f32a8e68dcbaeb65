/**
 * The key that detaches `webmux attach` (Ctrl-\ by default, like `dtach`; Ctrl-\ is SIGQUIT,
 * which interactive programs rarely need). Written `ctrl-X` or `^X`, or `none`.
 *
 * Besides the plain control byte it is recognised in the two encodings a program can switch the
 * local terminal to: the kitty keyboard protocol (`CSI 92 ; 5 u`) and xterm's modifyOtherKeys
 * (`CSI 27 ; 5 ; 92 ~`), so detaching still works while such a program runs.
 */
import { UsageError } from "./args.ts";

export const DEFAULT_DETACH_KEY = "ctrl-\\";

export class DetachKey {
  private readonly encodings: Uint8Array[];

  constructor(
    /** how to show it to a user: `Ctrl-\` */
    readonly label: string,
    /** the control byte, 0x00–0x1f */
    readonly byte: number,
  ) {
    // The key's character as the keyboard protocols name it: the lowercase letter or the symbol.
    const char = byte === 0 ? 0x40 : byte < 0x1b ? byte + 0x60 : byte + 0x40;
    this.encodings = [
      Uint8Array.of(byte),
      new TextEncoder().encode(`\x1b[${char};5u`),
      new TextEncoder().encode(`\x1b[27;5;${char}~`),
    ];
  }

  /** Index of the first occurrence of the key in typed bytes, or -1. */
  find(bytes: Uint8Array): number {
    let best = -1;
    for (const encoding of this.encodings) {
      const at = indexOf(bytes, encoding);
      if (at !== -1 && (best === -1 || at < best)) best = at;
    }
    return best;
  }
}

function indexOf(haystack: Uint8Array, needle: Uint8Array): number {
  const first = needle[0]!;
  for (let at = haystack.indexOf(first); at !== -1; at = haystack.indexOf(first, at + 1)) {
    let j = 1;
    while (j < needle.length && haystack[at + j] === needle[j]) j++;
    if (j === needle.length) return at;
  }
  return -1;
}

/** `ctrl-\`, `Ctrl-]`, `^A`, `C-a` → the key; `none` → null (no detach key). */
export function parseDetachKey(raw: string): DetachKey | null {
  if (/^(none|off|)$/i.test(raw)) return null;
  const match = /^(?:ctrl-|ctrl\+|c-|\^)(.)$/i.exec(raw);
  if (!match) throw new UsageError(`--detach-key must look like ctrl-\\, ctrl-] or ^A (or none), got "${raw}"`);
  const char = match[1]!;
  const upper = char.toUpperCase().charCodeAt(0);
  if (upper < 0x40 || upper > 0x5f) throw new UsageError(`--detach-key: there is no Ctrl-${char} control character`);
  const byte = upper - 0x40;
  // Esc (Ctrl-[) starts every escape sequence and Ctrl-M is Enter: neither can be reserved for detaching.
  if (byte === 0x1b || byte === 0x0d) throw new UsageError(`--detach-key: Ctrl-${char} is needed by programs (it is ${byte === 0x1b ? "Esc" : "Enter"})`);
  return new DetachKey(`Ctrl-${String.fromCharCode(upper)}`, byte);
}
