/**
 * `window.__webmux`: what end-to-end tests read instead of scraping the DOM renderer. It exposes
 * only what the page already shows (screen text and cells, byte counters), so it is always on.
 */
import type { TerminalView, TerminalViewStats } from "./terminal-view.ts";

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

declare global {
  interface Window {
    __webmux?: WebmuxDebug;
  }
}

export function exposeClientId(clientId: string): void {
  window.__webmux = { clientId, terminal: null };
}

/** Publishes the open terminal; returns the function that withdraws it. */
export function exposeTerminal(sessionId: string, clientId: string, view: TerminalView): () => void {
  const entry: WebmuxDebugTerminal = {
    sessionId,
    clientId,
    text: () => view.text(),
    cells: () => view.cells(),
    selection: () => view.selection(),
    stats: () => ({
      ...view.stats(),
      phase: view.phase().phase,
      controller: view.control()?.controller?.clientId ?? null,
    }),
    drop: () => view.drop(),
  };
  const debug = (window.__webmux ??= { clientId, terminal: null });
  debug.terminal = entry;
  return () => {
    if (debug.terminal === entry) debug.terminal = null;
  };
}
