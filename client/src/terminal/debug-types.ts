/**
 * The shapes of `window.__webmux` (debug-hook.ts) and of a terminal view's counters, apart from
 * any DOM code so the end-to-end specs type what they read with the client's own types.
 */

export type TerminalViewStats = {
  bytesReceived: number;
  opens: number;
  waits: number;
  generation: string | null;
  offset: number;
  renderedOffset: number | null;
  savedOffset: number | null;
  /** ms since navigation when the first complete screen (local copy or replay) was painted */
  firstPaintMs: number | null;
  restoredLocally: boolean;
  cols: number;
  rows: number;
  /** the first buffer row shown, and the one when scrolled to the bottom: equal unless scrolled back */
  viewportY: number;
  baseY: number;
};

export type WebmuxDebugTerminal = {
  sessionId: string;
  clientId: string;
  /** the whole active buffer as text, scrollback included */
  text(): string;
  /** what is on show cell by cell, history included (server/vt/screen-cells.ts) */
  cells(): string[];
  selection(): string;
  stats(): TerminalViewStats & { phase: string; controller: string | null };
  /** simulate a network drop */
  drop(): void;
};

export type WebmuxDebug = { clientId: string; terminal: WebmuxDebugTerminal | null };
