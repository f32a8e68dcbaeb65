/**
 * The marker shown where history was dropped (docs/design.md § Snapshots). Kept apart from
 * plain-text.ts so it can be tested on @xterm/headless without the browser build of xterm.js.
 */

/** The visible marker where history was dropped, in the terminal and in copied text alike. */
export const TRUNCATION_MARKER = "··· earlier output truncated ···";

/**
 * The marker as written into a freshly reset terminal of `rows` rows, before a snapshot: dim, on
 * a line of its own that is scrolled into the history at once, leaving the screen blank with the
 * cursor home. The snapshot then draws every row where the program drew it; written above the
 * snapshot instead, the marker took the top row and pushed a screen that never scrolls (a progress
 * bar, a prompt) one row down, so the program's later updates by row landed on the wrong rows.
 */
export function truncationMarkerSequence(rows: number): string {
  return `\x1b[2m${TRUNCATION_MARKER}\x1b[0m${"\r\n".repeat(Math.max(1, rows))}\x1b[H`;
}
