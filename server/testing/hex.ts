/** Test-only helpers: write and read byte vectors as hex ("00 68 69"). */

/** Bytes from space-separated hex pairs; throws on anything else so a typo cannot pass silently. */
export function hex(text: string): Uint8Array {
  const pairs = text.trim() === "" ? [] : text.trim().split(/\s+/);
  return Uint8Array.from(pairs, (pair) => {
    if (!/^[0-9a-fA-F]{2}$/.test(pair)) throw new Error(`hex: bad byte ${JSON.stringify(pair)}`);
    return parseInt(pair, 16);
  });
}

/** Space-separated lowercase hex pairs, for readable assertions. */
export function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join(" ");
}

/** Bytes of an ASCII string as hex pairs, to build expectations of JSON payloads. */
export function asciiHex(text: string): string {
  return Array.from(text, (c) => {
    const code = c.charCodeAt(0);
    if (code > 0x7f) throw new Error("asciiHex: not ASCII");
    return code.toString(16).padStart(2, "0");
  }).join(" ");
}
