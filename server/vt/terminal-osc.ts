/**
 * Meaning of the OSC strings the scanner collects: window title, working
 * directory, desktop notifications and shell-integration marks. Only these codes
 * are ever buffered or decoded; every other OSC is skipped byte by byte.
 */
import type { ScanEvent } from "./terminal-scanner.ts";

/** Longest title kept (UTF-16 units): more than any tab or list row shows, and it bounds SessionInfo JSON. */
export const MAX_TITLE_LENGTH = 256;

const utf8 = new TextDecoder();
const utf8Encoder = new TextEncoder();

/** Whether the scanner should collect the payload of OSC `code`. */
export function isCollectedOsc(code: number): boolean {
  return code === 0 || code === 2 || code === 7 || code === 9 || code === 777 || code === 133 || code === 633;
}

/** The event an OSC `code ; payload` (payload = the bytes after the first `;`) stands for, if any. */
export function oscEvent(code: number, payload: Uint8Array, at: number): ScanEvent | null {
  const data = utf8.decode(payload);
  switch (code) {
    case 0:
    case 2:
      return { type: "title", at, title: cut(data, MAX_TITLE_LENGTH) };
    case 7: {
      const cwd = fileUrlPath(data);
      return cwd === null ? null : { type: "cwd", at, cwd };
    }
    case 9:
      // ConEmu uses OSC 9;N (N = 1..12: progress, cwd, tab title, …) for things that are not notifications.
      return /^(?:[1-9]|1[0-2])(?:;|$)/.test(data) ? null : { type: "notify", at, body: data };
    case 777: {
      // rxvt-unicode / VTE: OSC 777 ; notify ; title ; body
      if (!data.startsWith("notify;")) return null;
      const rest = data.slice("notify;".length);
      const sep = rest.indexOf(";");
      const title = sep < 0 ? rest : rest.slice(0, sep);
      return { type: "notify", at, title: cut(title, MAX_TITLE_LENGTH), body: sep < 0 ? "" : rest.slice(sep + 1) };
    }
    case 133:
    case 633:
      return { type: "osc", at, code, data };
    default:
      return null;
  }
}

/**
 * The path of an OSC 7 working-directory URL: `file://host/path` (percent-encoded)
 * or kitty's `kitty-shell-cwd://host/path` (sent unencoded). The host is ignored.
 */
export function fileUrlPath(url: string): string | null {
  let rest: string;
  let encoded: boolean;
  if (/^file:\/\//i.test(url)) {
    rest = url.slice("file://".length);
    encoded = true;
  } else if (url.startsWith("kitty-shell-cwd://")) {
    rest = url.slice("kitty-shell-cwd://".length);
    encoded = false;
  } else {
    return null;
  }
  const slash = rest.indexOf("/");
  if (slash < 0) return null;
  const path = rest.slice(slash);
  return encoded ? percentDecode(path) : path;
}

/** Decode `%XX` escapes as UTF-8 bytes; a `%` not followed by two hex digits stays as it is. */
export function percentDecode(s: string): string {
  if (!s.includes("%")) return s;
  const src = utf8Encoder.encode(s);
  const out = new Uint8Array(src.length);
  let n = 0;
  for (let i = 0; i < src.length; i++) {
    const b = src[i];
    if (b === 0x25 && i + 2 < src.length) {
      const hi = hexValue(src[i + 1]);
      const lo = hexValue(src[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out[n++] = (hi << 4) | lo;
        i += 2;
        continue;
      }
    }
    out[n++] = b;
  }
  return utf8.decode(out.subarray(0, n));
}

function hexValue(b: number): number {
  if (b >= 0x30 && b <= 0x39) return b - 0x30;
  if (b >= 0x41 && b <= 0x46) return b - 0x41 + 10;
  if (b >= 0x61 && b <= 0x66) return b - 0x61 + 10;
  return -1;
}

/** At most `max` UTF-16 units, never splitting a surrogate pair. */
function cut(s: string, max: number): string {
  if (s.length <= max) return s;
  const code = s.charCodeAt(max - 1);
  return s.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}
