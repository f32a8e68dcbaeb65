/**
 * The native client's half of colour-scheme reports (docs/protocol.md § Colour-scheme reports
 * (mode 2031)): ask the local terminal for
 * its background with OSC 11 and judge it dark or light by luminance.
 */

/** OSC 11 query, ST-terminated (every terminal that answers OSC 11 accepts ST). */
export const BACKGROUND_QUERY = "\x1b]11;?\x1b\\";
/**
 * DA1 after the OSC 11 query: every terminal answers DA1, in order, so its answer arriving first
 * means the terminal ignored OSC 11 (no answer, no report) without waiting for a timeout.
 */
export const SENTINEL_QUERY = "\x1b[c";
/** Backgrounds whose luminance (0 black … 1 white) is below this are dark. */
export const DARK_LUMINANCE_BELOW = 0.5;

export type Rgb = { r: number; g: number; b: number };

/** `rgb:RRRR/GGGG/BBBB` (1–4 hex digits each), `rgba:…/A`, or `#RGB` … `#RRRRGGGGBBBB` → 0..1 each. */
export function parseXColor(spec: string): Rgb | null {
  const rgb = /^rgba?:([0-9a-f]{1,4})\/([0-9a-f]{1,4})\/([0-9a-f]{1,4})(?:\/[0-9a-f]{1,4})?$/i.exec(spec);
  if (rgb) {
    const [r, g, b] = rgb.slice(1, 4).map((h) => parseInt(h, 16) / (16 ** h.length - 1)) as [number, number, number];
    return { r, g, b };
  }
  const hash = /^#([0-9a-f]+)$/i.exec(spec);
  if (hash && hash[1]!.length % 3 === 0 && hash[1]!.length <= 12) {
    const n = hash[1]!.length / 3;
    const [r, g, b] = [0, 1, 2].map((i) => parseInt(hash[1]!.slice(i * n, (i + 1) * n), 16) / (16 ** n - 1)) as [number, number, number];
    return { r, g, b };
  }
  return null;
}

/** The colour in an OSC 11 answer (`ESC ] 11 ; <spec> BEL` or `… ESC \`), or null. */
export function parseBackgroundReply(reply: Uint8Array | string): Rgb | null {
  const text = typeof reply === "string" ? reply : new TextDecoder().decode(reply);
  const match = /^\x1b\]11;([^\x07\x1b]*)(?:\x07|\x1b\\?)?$/.exec(text);
  return match ? parseXColor(match[1]!) : null;
}

/** Rec. 709 luma of the colour as the terminal shows it. */
export function isDark(color: Rgb): boolean {
  return 0.2126 * color.r + 0.7152 * color.g + 0.0722 * color.b < DARK_LUMINANCE_BELOW;
}
