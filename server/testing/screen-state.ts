/**
 * Everything a user (or the program's next output) can tell apart about an xterm.js terminal, as
 * plain data: every cell of both buffers (characters, width, colours, attributes), the cursor and
 * pen, and the state that only later output reveals (scroll region, charsets, tab stops, saved
 * cursor, modes). Two terminals that show the same session compare equal; a difference is named
 * by where it is (docs/design.md § Snapshots, the differential tests).
 *
 * The state without a public API is read from xterm.js internals (`_core`), the same ones the
 * snapshot writer reads (server/session/terminal-snapshot.js).
 */
import xtermHeadless from "@xterm/headless";
import unicode11Addon from "@xterm/addon-unicode11";

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

export type ScreenStateOptions = {
  /** lines of history above the screen compared (default: all of the normal buffer's) */
  scrollback?: number;
};

/* eslint-disable @typescript-eslint/no-explicit-any -- xterm.js internals */
function cellText(line: any, col: number, cell: any): string {
  line.getCell(col, cell);
  return describeCell(cell);
}

function describeCell(cell: any): string {
  const width = cell.getWidth();
  // A blank and a space look the same; the snapshot writes a blank that has a pen as a space.
  const chars = cell.getChars() || (width === 1 ? " " : "");
  const style = [
    cell.getFgColorMode(),
    cell.getFgColor(),
    cell.getBgColorMode(),
    cell.getBgColor(),
    cell.isBold() ? "b" : "",
    cell.isDim() ? "d" : "",
    cell.isItalic() ? "i" : "",
    cell.isUnderline() ? "u" : "",
    cell.isBlink() ? "k" : "",
    cell.isInverse() ? "r" : "",
    cell.isInvisible() ? "h" : "",
    cell.isStrikethrough() ? "s" : "",
    cell.isOverline() ? "o" : "",
  ].join(",");
  return `${JSON.stringify(chars)}/${width}/${style}`;
}

function bufferLines(buffer: any, from: number, cols: number): string[] {
  const out: string[] = [];
  const cell = buffer.getNullCell();
  const blank = describeCell(buffer.getNullCell());
  for (let y = from; y < buffer.length; y++) {
    const line = buffer.getLine(y);
    if (!line) continue;
    const cells: string[] = [];
    for (let x = 0; x < cols; x++) cells.push(cellText(line, x, cell));
    // Trailing default blanks are not distinguishable from a shorter line.
    while (cells.length > 0 && cells.at(-1) === blank) cells.pop();
    // The buffer's first line has nothing to be wrapped from (SU can leave it flagged): not written.
    out.push(`${line.isWrapped && y > 0 ? "↩" : ""}${cells.join(" ")}`);
  }
  return out;
}

function internalState(term: HeadlessTerminal): Record<string, unknown> {
  const core = (term as any)._core;
  const charsetService = core._charsetService ?? core._inputHandler._charsetService;
  const charsetName = (charset: unknown) => (charset === undefined ? "B" : charset === null ? "null" : JSON.stringify(charset).slice(0, 40));
  const bufferState = (buffer: any) => ({
    scrollRegion: [buffer.scrollTop, buffer.scrollBottom],
    tabs: Object.keys(buffer.tabs).filter((k) => buffer.tabs[k]).join(","),
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

/** The comparable state of `term`, one line per fact. */
export function screenState(term: HeadlessTerminal, options: ScreenStateOptions = {}): string[] {
  const normal = term.buffer.normal;
  const active = term.buffer.active;
  const historyFrom = options.scrollback === undefined ? 0 : Math.max(0, normal.baseY - options.scrollback);
  const out: string[] = [];
  out.push(`size ${term.cols}x${term.rows}`);
  out.push(`active ${active.type}`);
  out.push(`cursor ${active.cursorX},${active.cursorY}`);
  const normalLines = bufferLines(normal, historyFrom, term.cols);
  for (const [i, line] of normalLines.entries()) out.push(`normal[${i - (normal.baseY - historyFrom)}] ${line}`);
  if (active.type === "alternate") {
    for (const [i, line] of bufferLines(active, 0, term.cols).entries()) out.push(`alternate[${i}] ${line}`);
  }
  out.push(`modes ${JSON.stringify(term.modes)}`);
  for (const [key, value] of Object.entries(internalState(term))) out.push(`${key} ${JSON.stringify(value)}`);
  return out;
}

/** The first few lines where two states differ, for a readable failure (empty: equal). */
export function stateDifferences(expected: string[], actual: string[], max = 8): string[] {
  const keyOf = (line: string) => line.slice(0, line.indexOf(" "));
  const wanted = new Map(expected.map((line) => [keyOf(line), line]));
  const got = new Map(actual.map((line) => [keyOf(line), line]));
  const differences: string[] = [];
  for (const key of new Set([...wanted.keys(), ...got.keys()])) {
    if (wanted.get(key) === got.get(key)) continue;
    differences.push(`${key}\n  stayed:    ${wanted.get(key) ?? "(none)"}\n  rejoined:  ${got.get(key) ?? "(none)"}`);
    if (differences.length >= max) break;
  }
  return differences;
}
