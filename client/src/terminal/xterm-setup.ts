/**
 * The xterm.js instance of a terminal view with its addons: fit, Unicode 11 widths, clickable
 * links and search.
 */
import { loadFontSize } from "../storage/device-settings.ts";
import { Terminal } from "@xterm/xterm";
import { FitAddon } from "@xterm/addon-fit";
import { SearchAddon } from "@xterm/addon-search";
import { Unicode11Addon } from "@xterm/addon-unicode11";
import { WebLinksAddon } from "@xterm/addon-web-links";
import "@xterm/xterm/css/xterm.css";
import { terminalTheme } from "./themes.ts";

/**
 * Scrollback kept in the browser (and in its IndexedDB copy). More than the server's headless
 * scrollback (10 000 lines), so a reset snapshot fits whole with its truncation marker on top.
 */
export const SCROLLBACK_LINES = 12_000;
/** Readable on a desktop. */
export const FONT_SIZE_PX = 14;
/** Phones trade a pixel for ~4 more columns at 360 px. */
export const NARROW_FONT_SIZE_PX = 13;
/** Below this viewport width the narrow font size applies. */
export const NARROW_VIEWPORT_PX = 600;
const FONT_FAMILY = 'ui-monospace, "SF Mono", "Cascadia Mono", "DejaVu Sans Mono", Menlo, Consolas, monospace';

export type XtermParts = {
  terminal: Terminal;
  fit: FitAddon;
  search: SearchAddon;
};

export function createXterm(dark: boolean): XtermParts {
  const terminal = new Terminal({
    // Unicode 11 widths and search decorations are "proposed" APIs.
    allowProposedApi: true,
    scrollback: SCROLLBACK_LINES,
    fontFamily: FONT_FAMILY,
    fontSize: loadFontSize() ?? (window.innerWidth < NARROW_VIEWPORT_PX ? NARROW_FONT_SIZE_PX : FONT_SIZE_PX),
    theme: terminalTheme(dark),
    cursorBlink: false,
    // Alt+click moves the prompt cursor by sending arrow keys: surprising for an observer.
    altClickMovesCursor: false,
  });
  const fit = new FitAddon();
  const search = new SearchAddon();
  terminal.loadAddon(fit);
  terminal.loadAddon(search);
  terminal.loadAddon(new Unicode11Addon());
  terminal.unicode.activeVersion = "11";
  terminal.loadAddon(
    new WebLinksAddon((event, uri) => {
      event.preventDefault();
      // noopener: the opened page gets no handle on this one.
      window.open(uri, "_blank", "noopener,noreferrer");
    }),
  );
  return { terminal, fit, search };
}

/** Search highlight colours per theme (xterm wants #RRGGBB). */
export const searchDecorations = (dark: boolean) =>
  dark
    ? { matchBackground: "#3b4a2f", activeMatchBackground: "#9e6a03", matchOverviewRuler: "#9e6a03", activeMatchColorOverviewRuler: "#f0b72f" }
    : { matchBackground: "#fff1b8", activeMatchBackground: "#ffb000", matchOverviewRuler: "#d4a72c", activeMatchColorOverviewRuler: "#bf8700" };
