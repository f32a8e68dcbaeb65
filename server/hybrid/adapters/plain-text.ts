/**
 * What a terminal program printed, as text: escape sequences and control characters removed.
 * Used for a failed TUI start's last line and for Claude Code's local-command output, which keeps
 * the colours the command printed.
 */

/**
 * CSI, OSC (BEL or ST ended), and every other ESC sequence — intermediates then a final byte,
 * which covers ESC 7 / ESC 8 (save/restore cursor) and ESC ( B (charset) that a TUI prints around
 * its last message.
 */
const ESCAPES = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[ -/]*[0-~]/g;
/** C0 controls other than tab and line ends (SI, SO, BEL, …), and DEL: never text. */
const CONTROLS = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g;

export function plainText(text: string): string {
  return text.replace(ESCAPES, "").replace(CONTROLS, "");
}
