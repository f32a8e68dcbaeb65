/**
 * What a user sees of an xterm.js terminal, as plain lines read through its public buffer API:
 * size, active buffer, cursor, every cell of the normal buffer (history included) and of the
 * alternate one while it is shown (characters, width, colours, emphasis), and the modes xterm.js
 * reports. Shared VT code (docs/design.md § Parts and layers): the tests compare headless terminals
 * with it (server/testing/screen-state.ts adds the hidden state), and the browser's debug hook
 * (client/src/terminal/debug-hook.ts) gives it to the end-to-end tests, so a reloaded page and
 * one that stayed connected are compared cell by cell (docs/design.md § Snapshots).
 *
 * Structural types: both @xterm/xterm and @xterm/headless terminals fit, and this folder imports
 * no package.
 */

/** The part of xterm.js's IBufferCell read here. */
export type CellLike = {
  getWidth(): number;
  getChars(): string;
  getFgColorMode(): number;
  getFgColor(): number;
  getBgColorMode(): number;
  getBgColor(): number;
  isBold(): number;
  isDim(): number;
  isItalic(): number;
  isUnderline(): number;
  isBlink(): number;
  isInverse(): number;
  isInvisible(): number;
  isStrikethrough(): number;
  isOverline(): number;
  isAttributeDefault(): boolean;
};

/** The part of xterm.js's IBuffer read here. */
export type BufferLike = {
  readonly type: string;
  readonly length: number;
  readonly baseY: number;
  readonly cursorX: number;
  readonly cursorY: number;
  getNullCell(): CellLike;
  getLine(y: number): { readonly isWrapped: boolean; getCell(x: number, cell?: CellLike): CellLike | undefined } | undefined;
};

/** The part of an xterm.js Terminal read here. */
export type TerminalLike = {
  readonly cols: number;
  readonly rows: number;
  readonly buffer: { readonly normal: BufferLike; readonly active: BufferLike };
  readonly modes: object;
};

export type ScreenCellsOptions = {
  /** lines of history above the screen included (default: all of the normal buffer's) */
  scrollback?: number;
};

function describeCell(cell: CellLike): string {
  const width = cell.getWidth();
  // A blank and a space look the same; the snapshot writer writes a blank that has a pen as a space.
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

/** One line per buffer line from `from`: its cells, `↩` first when it is a soft wrap of the one above. */
export function bufferRows(buffer: BufferLike, from: number, cols: number): string[] {
  const out: string[] = [];
  const cell = buffer.getNullCell();
  for (let y = from; y < buffer.length; y++) {
    const line = buffer.getLine(y);
    if (!line) continue;
    const cells: string[] = [];
    /** where the trailing run of blanks (or spaces) without any attribute starts */
    let end = 0;
    for (let x = 0; x < cols; x++) {
      const read = line.getCell(x, cell) ?? cell;
      cells.push(describeCell(read));
      const chars = read.getChars();
      if (!((chars === "" || chars === " ") && read.getWidth() === 1 && read.isAttributeDefault())) end = x + 1;
    }
    // Trailing default blanks are not distinguishable from a shorter line.
    cells.length = end;
    // The buffer's first line has nothing to be wrapped from (SU can leave it flagged): not written.
    out.push(`${line.isWrapped && y > 0 ? "↩" : ""}${cells.join(" ")}`);
  }
  return out;
}

/** The visible state of `term`, one line per fact, each starting with its key (`normal[-3]`, `cursor`, …). */
export function screenCells(term: TerminalLike, options: ScreenCellsOptions = {}): string[] {
  const normal = term.buffer.normal;
  const active = term.buffer.active;
  const historyFrom = options.scrollback === undefined ? 0 : Math.max(0, normal.baseY - options.scrollback);
  const out: string[] = [];
  out.push(`size ${term.cols}x${term.rows}`);
  out.push(`active ${active.type}`);
  out.push(`cursor ${active.cursorX},${active.cursorY}`);
  const normalLines = bufferRows(normal, historyFrom, term.cols);
  for (const [i, line] of normalLines.entries()) out.push(`normal[${i - (normal.baseY - historyFrom)}] ${line}`);
  if (active.type === "alternate") {
    for (const [i, line] of bufferRows(active, 0, term.cols).entries()) out.push(`alternate[${i}] ${line}`);
  }
  out.push(`modes ${JSON.stringify(term.modes)}`);
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
