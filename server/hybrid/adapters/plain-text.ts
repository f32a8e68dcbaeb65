/**
 * What a terminal program printed, as text: escape sequences and control characters removed.
 * Used for a failed TUI start's last line and for Claude Code's local-command output, which keeps
 * the colours the command printed.
 */

/**
 * One token of terminal output: a cursor move along the line (CSI n C forward, CSI n G to a
 * column), any other CSI, an OSC (BEL or ST ended), any other ESC sequence (intermediates then a
 * final byte: ESC 7 / ESC 8, ESC ( B), a line end, a C0 control or DEL, or a run of text.
 */
const TOKENS =
  /\x1b\[(\d*)([CG])|\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[ -/]*[0-~]?|(\r\n|\n|\r)|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]|[^\x00-\x08\x0a-\x1f\x7f]+/g;
/** A longer gap than this from one cursor move is layout (a column jump), not blanks between words: capped. */
const MAX_GAP_SPACES = 8;

/**
 * Ink-based TUIs such as Claude Code do not print the blanks between words: they move the cursor
 * over them (CSI n G, CSI n C). Those moves become spaces, so the words stay apart.
 */
export function plainText(text: string): string {
  let out = "";
  let column = 0;
  for (const m of text.matchAll(TOKENS)) {
    const [token, count, move, lineEnd] = m;
    if (move) {
      const n = Number(count || "1") || 1;
      const gap = move === "C" ? n : n - 1 - column;
      if (gap > 0) {
        const spaces = Math.min(gap, MAX_GAP_SPACES);
        out += " ".repeat(spaces);
        column += gap;
      }
    } else if (lineEnd) {
      out += lineEnd;
      column = 0;
    } else if (token[0] !== "\x1b" && !/^[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]$/.test(token)) {
      out += token;
      column += token.length;
    }
  }
  return out;
}
