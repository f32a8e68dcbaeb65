/**
 * `window.__webmux`: what end-to-end tests read instead of scraping the DOM renderer. It exposes
 * only what the page already shows (screen text and cells, byte counters), so it is always on.
 */
import type { WebmuxDebug, WebmuxDebugTerminal } from "./debug-types.ts";
import type { TerminalView } from "./terminal-view.ts";


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
