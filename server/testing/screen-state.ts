/**
 * Everything a user (or the program's next output) can tell apart about an xterm.js terminal, as
 * plain data: every cell of both buffers (characters, width, colours, attributes) and the cursor
 * (server/vt/screen-cells.ts, which the browser's debug hook shares), the pen, and the state that
 * only later output reveals (scroll region, charsets, tab stops, saved cursor, modes). Two terminals that show the same session compare equal; a difference is named
 * by where it is (docs/design.md § Snapshots, the differential tests).
 *
 * The state without a public API is read from xterm.js internals (`_core`), the same ones the
 * snapshot writer reads (server/vt/terminal-snapshot.js).
 */
import xtermHeadless from "@xterm/headless";
import unicode11Addon from "@xterm/addon-unicode11";
import { screenCells, stateDifferences, type ScreenCellsOptions } from "../vt/screen-cells.ts";

const { Terminal } = xtermHeadless;
const { Unicode11Addon } = unicode11Addon;
type HeadlessTerminal = InstanceType<typeof Terminal>;

/** A headless terminal configured like the browser's (Unicode 11 widths, 10 000 lines of history). */
export function browserLikeTerminal(cols: number, rows: number, scrollback = 10_000): HeadlessTerminal {
  const term = new Terminal({ cols, rows, scrollback, allowProposedApi: true, logLevel: "off" });
  term.loadAddon(new Unicode11Addon());
  term.unicode.activeVersion = "11";
  return term;
}

/** Resolves once everything written to `term` so far is parsed. */
export function parsed(term: HeadlessTerminal): Promise<void> {
  return new Promise((resolve) => term.write("", resolve));
}

export type ScreenStateOptions = ScreenCellsOptions;

/* eslint-disable @typescript-eslint/no-explicit-any -- xterm.js internals */
function internalState(term: HeadlessTerminal): Record<string, unknown> {
  const core = (term as any)._core;
  const charsetService = core._charsetService ?? core._inputHandler._charsetService;
  const charsetName = (charset: unknown) => (charset === undefined ? "B" : charset === null ? "null" : JSON.stringify(charset).slice(0, 40));
  const bufferState = (buffer: any) => ({
    scrollRegion: [buffer.scrollTop, buffer.scrollBottom],
    // Stops past the right margin (left from a wider grid) are not state a snapshot can carry
    // (docs/design.md § Snapshots, what is not restored).
    tabs: Object.keys(buffer.tabs).filter((k) => buffer.tabs[k] && Number(k) < term.cols).join(","),
    // DECRC clamps: a saved row that scrolled into the history is row 0, a pending wrap the last column.
    saved: [Math.min(buffer.savedX, term.cols - 1), Math.max(0, buffer.savedY - buffer.ybase), buffer.savedCurAttrData.fg, buffer.savedCurAttrData.bg, charsetName(buffer.savedCharset)],
  });
  const modes = core.coreService.decPrivateModes;
  const pen = core._inputHandler._curAttrData;
  return {
    normal: bufferState(core.buffers.normal),
    alternate: bufferState(core.buffers.alt),
    insertMode: core.coreService.modes.insertMode,
    decPrivateModes: { ...modes },
    cursorHidden: core.coreService.isCursorHidden,
    mouse: [core.coreMouseService.activeProtocol, core.coreMouseService.activeEncoding],
    charsets: [0, 1, 2, 3].map((g) => charsetName(charsetService._charsets[g])),
    glevel: charsetService.glevel,
    activeCharset: charsetName(charsetService.charset),
    pen: [pen.fg, pen.bg, pen.extended?.underlineStyle ?? 0, pen.extended?.underlineColor ?? 0],
  };
}
/* eslint-enable @typescript-eslint/no-explicit-any */

/** The comparable state of `term`, one line per fact: what it shows (screenCells), then its hidden state. */
export function screenState(term: HeadlessTerminal, options: ScreenStateOptions = {}): string[] {
  const out = screenCells(term, options);
  for (const [key, value] of Object.entries(internalState(term))) out.push(`${key} ${JSON.stringify(value)}`);
  return out;
}

export { stateDifferences };
