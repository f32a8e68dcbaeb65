/**
 * "Copy all": the session's retained output as plain text. The ring holds raw terminal bytes
 * (cursor moves, colours, carriage returns), so they are played into an offscreen xterm.js and
 * its buffer is read back as text, the way the screen showed it.
 */
import { Terminal } from "@xterm/xterm";
import { Unicode11Addon } from "@xterm/addon-unicode11";
import type { RingBytes } from "../api.ts";
import { TRUNCATION_MARKER } from "./truncation-marker.ts";

export { TRUNCATION_MARKER, truncationMarkerSequence } from "./truncation-marker.ts";
/** Lines kept when rendering the ring as text: more than 4 MiB of 80-column lines ever fills. */
export const MAX_COPY_LINES = 200_000;

export async function ringToPlainText(ring: RingBytes, cols: number, rows: number): Promise<string> {
  const terminal = new Terminal({ cols, rows, scrollback: MAX_COPY_LINES, allowProposedApi: true });
  try {
    terminal.loadAddon(new Unicode11Addon());
    terminal.unicode.activeVersion = "11";
    await new Promise<void>((resolve) => terminal.write(ring.bytes, resolve));
    const buffer = terminal.buffer.normal;
    const lines: string[] = [];
    for (let y = 0; y < buffer.length; y++) {
      const line = buffer.getLine(y);
      if (!line) continue;
      // Trailing blanks matter only where the row wraps into the next one.
      const text = line.translateToString(!buffer.getLine(y + 1)?.isWrapped);
      // A soft-wrapped row continues the previous line.
      if (line.isWrapped && lines.length > 0) lines[lines.length - 1] += text;
      else lines.push(text);
    }
    while (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
    if (ring.truncated) lines.unshift(TRUNCATION_MARKER);
    return lines.join("\n") + "\n";
  } finally {
    terminal.dispose();
  }
}
