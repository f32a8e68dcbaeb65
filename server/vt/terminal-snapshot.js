// @ts-check
/**
 * A terminal's whole state as bytes: written to a freshly reset xterm.js of the same size (with
 * Unicode 11 widths), they reproduce the screen, the history, and the state that only later output
 * reveals. docs/design.md § Snapshots lists what @xterm/addon-serialize leaves out and how each gap
 * is closed here. It replaces the addon: its cell writer loses wrapped lines that start with a
 * blank, and it has no way to add state between the buffers.
 *
 * Shared VT code (docs/design.md § Parts and layers): the server's headless worker
 * (server/session/headless-worker.js) makes reset snapshots with it and the browser its stored copy
 * of each screen (client/src/terminal/screen-saver.ts), for @xterm/headless and @xterm/xterm alike
 * (both have the same core). Plain JavaScript so the worker loads it without a TypeScript loader,
 * and free of node: imports for the browser. The state xterm.js keeps private (scroll region, charsets, tab stops, saved cursor,
 * modes, the pen) is read from its internals (`_core`), as the serialize addon itself reads the
 * pen; server/vt/terminal-snapshot.test.ts pins every one of them, so an xterm.js upgrade that
 * renames one fails there, not in front of a user.
 */

const ESC = "\x1b";
const CSI = "\x1b[";

/** xterm.js's colour-mode bits (common/buffer/Constants.ts, Attributes.CM_*). */
const CM_MASK = 0x3000000;
const CM_P16 = 0x1000000;
const CM_P256 = 0x2000000;
const CM_RGB = 0x3000000;
/** BgFlags.HAS_EXTENDED: the cell has extended attributes (underline style or colour, link). */
const HAS_EXTENDED = 0x10000000;
/** FgFlags.UNDERLINE. */
const FG_UNDERLINE = 0x10000000;

/** Charset designators xterm.js understands (common/data/Charsets.ts); `B` (US ASCII) is the default. */
const CHARSET_DESIGNATORS = "0A4C5RQKYE6ZH7=";
/** `ESC <intermediate> <designator>` designates G0…G3. */
const G_INTERMEDIATES = ["(", ")", "*", "+"];
/** Locking shifts selecting G0…G3 into GL: SI, SO, LS2, LS3. */
const LOCKING_SHIFTS = ["\x0f", "\x0e", `${ESC}n`, `${ESC}o`];

/** Charset table object → designator, per xterm.js bundle (keyed by its charset service's class).
 * xterm.js keeps the tables private, so each is found by designating it once in the terminal at
 * hand and putting its charsets back (the tables are objects shared by every terminal of a bundle). */
/** @type {WeakMap<object, Map<unknown, string>>} */
const designatorsByBundle = new WeakMap();

/** @param {any} core */
function charsetDesignators(core) {
  const known = designatorsByBundle.get(core._charsetService.constructor);
  if (known) return known;
  const found = new Map();
  const handler = core._inputHandler;
  const charsets = core._charsetService;
  const saved = [...charsets._charsets];
  const savedLevel = charsets.glevel;
  const savedCharset = charsets.charset;
  for (const designator of CHARSET_DESIGNATORS) {
    handler.selectCharset(`(${designator}`);
    const table = charsets._charsets[0];
    if (table && !found.has(table)) found.set(table, designator);
  }
  charsets._charsets = saved;
  charsets.glevel = savedLevel;
  charsets.charset = savedCharset;
  designatorsByBundle.set(charsets.constructor, found);
  return found;
}

/** @param {Map<unknown, string>} designators @param {unknown} table */
function designatorFor(designators, table) {
  if (table === undefined || table === null) return "B";
  return designators.get(table) ?? "B";
}

/** SGR parameters for one colour. @param {number} value @param {30 | 40} base */
function colorParams(value, base) {
  const mode = value & CM_MASK;
  const color = value & 0xffffff;
  if (mode === CM_RGB) return [base + 8, 2, (color >>> 16) & 0xff, (color >>> 8) & 0xff, color & 0xff];
  if (mode === CM_P256) return [base + 8, 5, color & 0xff];
  if (mode === CM_P16) return color & 8 ? [base + 60 + (color & 7)] : [base + (color & 7)];
  return [];
}

/**
 * The SGR sequence that sets a pen from the default one: colours, emphasis, and the extended
 * underline style and colour the serialize addon drops.
 * @param {any} attr xterm.js AttributeData
 * @param {boolean} withExtended
 */
export function penSequence(attr, withExtended = true) {
  /** @type {(number | string)[]} */
  const params = [0];
  if (attr.isBold()) params.push(1);
  if (attr.isDim()) params.push(2);
  if (attr.isItalic()) params.push(3);
  // The underline bit itself: isUnderline() is also true for a link's cells, which a link draws.
  if (attr.fg & FG_UNDERLINE) {
    const style = withExtended ? (extendedOf(attr).ext >> 26) & 7 || 1 : 1;
    params.push(style > 1 ? `4:${style}` : 4);
  }
  if (attr.isBlink()) params.push(5);
  if (attr.isInverse()) params.push(7);
  if (attr.isInvisible()) params.push(8);
  if (attr.isStrikethrough()) params.push(9);
  if (attr.isOverline()) params.push(53);
  params.push(...colorParams(attr.fg, 30), ...colorParams(attr.bg, 40));
  // An underline colour of its own (SGR 58); without one xterm.js reports the foreground's.
  const underlineColor = attr.bg & HAS_EXTENDED ? extendedOf(attr).ext & 0x3ffffff : -1;
  if (withExtended && ~underlineColor && (underlineColor & CM_MASK) !== 0) {
    const color = underlineColor & 0xffffff;
    if ((underlineColor & CM_MASK) === CM_RGB) params.push(58, 2, (color >>> 16) & 0xff, (color >>> 8) & 0xff, color & 0xff);
    else params.push(58, 5, color & 0xff);
  }
  let sgr = `${CSI}${params.join(";")}m`;
  if (attr.isProtected?.()) sgr += `${CSI}1"q`;
  return sgr;
}

/** OSC 8 opening the link `urlId` (xterm.js's OscLinkService), or closing any with 0; "" for an unknown link. @param {any} core @param {number} urlId */
function linkSequence(core, urlId) {
  if (urlId === 0) return `${ESC}]8;;${ESC}\\`;
  const data = core._oscLinkService?.getLinkData(urlId);
  return data ? `${ESC}]8;${data.id ? `id=${data.id}` : ""};${data.uri}${ESC}\\` : "";
}

/** @param {number} row 0-based @param {number} col 0-based */
const cup = (row, col) => `${CSI}${row + 1};${col + 1}H`;

/** xterm.js's default tab stops: every 8 columns from 0. @param {any} buffer @param {number} cols */
function defaultTabs(buffer, cols) {
  for (let x = 0; x < cols; x++) if (Boolean(buffer.tabs[x]) !== (x % 8 === 0)) return false;
  return true;
}

/**
 * Tab stops, saved cursor (DECSC) and scroll region of the buffer just drawn, which is active.
 * Ends with the cursor anywhere: the caller positions it.
 * @param {any} core @param {any} buffer @param {Map<unknown, string>} designators
 */
function bufferState(core, buffer, designators) {
  const cols = core.cols;
  const rows = core.rows;
  let out = "";
  if (!defaultTabs(buffer, cols)) {
    out += `${CSI}3g`;
    for (let x = 0; x < cols; x++) if (buffer.tabs[x]) out += `${cup(0, x)}${ESC}H`;
  }
  // DECSC: position, the pen's colours and emphasis (not its extended attributes, which xterm.js
  // does not save), and the charset then in GL.
  const savedRow = Math.min(rows - 1, Math.max(0, buffer.savedY - buffer.ybase));
  const savedCol = Math.min(cols - 1, Math.max(0, buffer.savedX));
  const savedTable = buffer.savedCharset;
  const savedIsDefault = savedRow === 0 && savedCol === 0 && buffer.savedCurAttrData.fg === 0 && buffer.savedCurAttrData.bg === 0 && (savedTable === undefined || savedTable === null);
  if (!savedIsDefault) {
    out += cup(savedRow, savedCol) + penSequence(buffer.savedCurAttrData, false);
    out += `${ESC}(${designatorFor(designators, savedTable)}\x0f${ESC}7${ESC}(B${CSI}0m`;
  }
  if (buffer.scrollTop !== 0 || buffer.scrollBottom !== rows - 1) out += `${CSI}${buffer.scrollTop + 1};${buffer.scrollBottom + 1}r`;
  return out;
}

/**
 * Put the cursor where it is in `buffer`. A cursor past the last column (a wrap pending: the next
 * character goes to the next line) cannot be reached by a cursor move, so the last character of
 * the row is printed again with its own attributes, which leaves the cursor exactly there.
 * @param {any} core @param {any} buffer @param {boolean} origin DECOM is on (rows count from the region's top)
 */
function cursorSequence(core, buffer, origin) {
  const cols = core.cols;
  const top = origin ? buffer.scrollTop : 0;
  if (buffer.x < cols) return cup(buffer.y - top, buffer.x);
  const line = buffer.lines.get(buffer.ybase + buffer.y);
  if (!line) return cup(buffer.y - top, cols - 1);
  const cell = new (buffer.getNullCell().constructor)();
  let start = cols - 1;
  line.loadCell(start, cell);
  if (cell.getWidth() === 0 && start > 0) {
    start -= 1;
    line.loadCell(start, cell);
  }
  const chars = cell.getChars() || " ";
  const link = linkSequence(core, extendedOf(cell).urlId);
  return cup(buffer.y - top, start) + penSequence(cell) + (link ? link + chars + linkSequence(core, 0) : chars);
}

/** The modes a program set, from a reset terminal's defaults. @param {any} core */
function modeSequence(core) {
  const modes = core.coreService.decPrivateModes;
  let out = "";
  if (core.coreService.modes.insertMode) out += `${CSI}4h`;
  if (!modes.wraparound) out += `${CSI}?7l`;
  if (modes.reverseWraparound) out += `${CSI}?45h`;
  if (modes.applicationCursorKeys) out += `${CSI}?1h`;
  if (modes.applicationKeypad) out += `${ESC}=`;
  if (modes.bracketedPasteMode) out += `${CSI}?2004h`;
  if (modes.sendFocus) out += `${CSI}?1004h`;
  const protocol = { X10: 9, VT200: 1000, DRAG: 1002, ANY: 1003 }[/** @type {string} */ (core.coreMouseService.activeProtocol)];
  if (protocol) out += `${CSI}?${protocol}h`;
  const encoding = { SGR: 1006, SGR_PIXELS: 1016 }[/** @type {string} */ (core.coreMouseService.activeEncoding)];
  if (encoding) out += `${CSI}?${encoding}h`;
  if (core.coreService.isCursorHidden) out += `${CSI}?25l`;
  if (modes.cursorStyle !== undefined) {
    const base = { block: 1, underline: 3, bar: 5 }[/** @type {string} */ (modes.cursorStyle)] ?? 1;
    out += `${CSI}${modes.cursorBlink === false ? base + 1 : base} q`;
  }
  return out;
}

/** G0…G3 designations and the set in GL. @param {any} core @param {Map<unknown, string>} designators */
function charsetSequence(core, designators) {
  const service = core._charsetService;
  let out = "";
  for (let g = 0; g < 4; g++) {
    const designator = designatorFor(designators, service._charsets[g]);
    if (designator !== "B") out += `${ESC}${G_INTERMEDIATES[g]}${designator}`;
  }
  if (service.glevel !== 0) out += LOCKING_SHIFTS[service.glevel] ?? "";
  return out;
}

/** A pen's extended attributes; a cell without the flag may hold a stale object. @param {any} attr */
function extendedOf(attr) {
  if (!(attr.bg & HAS_EXTENDED) || !attr.extended) return { ext: 0, urlId: 0 };
  return { ext: attr.extended._ext ?? 0, urlId: attr.extended.urlId ?? 0 };
}

/** Same colours, emphasis and extended attributes (underline style and colour, link). @param {any} a @param {any} b */
function samePen(a, b) {
  if (a.fg !== b.fg || a.bg !== b.bg) return false;
  const ea = extendedOf(a);
  const eb = extendedOf(b);
  return ea.ext === eb.ext && ea.urlId === eb.urlId;
}

/**
 * The cells of `buffer` from line `first` to its end, written from the top left of a blank screen:
 * characters with their pens, blanks as cursor moves (or erasures where they have a background),
 * and each soft wrap made by really wrapping, so the restored lines are wrapped lines too (they
 * reflow on a resize and copy as one line). The addon's writer lost a wrapped line that starts
 * with a blank, which moved the rest of that line one or two columns.
 * @param {any} core @param {any} buffer @param {number} first
 */
function cellsSequence(core, buffer, first) {
  const cols = core.cols;
  // A CellData of xterm.js's own (its class is private): what loadCell fills.
  const CellData = buffer.getNullCell().constructor;
  const cell = new CellData();
  const blank = new CellData();
  /** the pen last written; `null` after a reset to the default one */
  let pen = blank.clone();
  let link = 0;
  const parts = [];
  /** @param {any} attr */
  const usePen = (attr) => {
    if (samePen(attr, pen)) return;
    parts.push(penSequence(attr));
    const nextLink = extendedOf(attr).urlId;
    if (nextLink !== link) {
      const opened = linkSequence(core, nextLink);
      parts.push(opened || linkSequence(core, 0));
      link = opened ? nextLink : 0;
    }
    pen = attr.clone();
  };
  const defaultPen = () => {
    if (pen.fg !== 0 || pen.bg !== 0 || link !== 0) usePen(blank);
  };
  for (let y = first; y < buffer.lines.length; y++) {
    const line = buffer.lines.get(y);
    /** where the cursor is on this row (cols: a wrap is pending) */
    let x = 0;
    /** cells passed over since x, to be skipped with one move */
    let skip = 0;
    for (let col = 0; col < cols; col++) {
      line.loadCell(col, cell);
      const width = cell.getWidth();
      if (width === 0) continue;
      // A blank with more than a background (left where a wide character was overwritten) is written as a
      // space: the same on screen, and erasing could not give it the pen.
      const chars = cell.getChars() || (cell.fg !== 0 || (cell.bg & ~(CM_MASK | 0xffffff)) !== 0 ? " " : "");
      if (chars === "") {
        // Blanks keep only a background (xterm.js erases with the pen's background alone).
        if ((cell.bg & (CM_MASK | 0xffffff)) !== 0) {
          if (skip > 0) parts.push(`${CSI}${skip}C`);
          x += skip;
          skip = 0;
          usePen(cell);
          let run = 1;
          while (col + run < cols) {
            line.loadCell(col + run, cell);
            if (cell.getChars() !== "" || cell.bg !== pen.bg || cell.fg !== pen.fg) break;
            run++;
          }
          parts.push(`${CSI}${run}X`);
          skip = run;
          col += run - 1;
        } else {
          skip += 1;
        }
        continue;
      }
      if (skip > 0) parts.push(`${CSI}${skip}C`);
      x += skip;
      skip = 0;
      usePen(cell);
      parts.push(chars);
      x += width;
    }
    if (y === buffer.lines.length - 1) break;
    const next = buffer.lines.get(y + 1);
    // A line feed or a wrap at the bottom scrolls in a line filled with the pen's background.
    defaultPen();
    if (!next?.isWrapped) {
      parts.push("\r\n");
      continue;
    }
    if (x >= cols) {
      // A wrap is pending: the next printed character wraps. One is printed and erased, so a
      // wrapped line that starts with a blank is wrapped too.
      parts.push(` ${CSI}D${CSI}X`);
      continue;
    }
    // The line ends in blanks (a wide character that did not fit, or erased text): fill its last
    // cell, wrap, then give both cells back what they held.
    line.loadCell(cols - 1, cell);
    const lastBg = cell.clone();
    parts.push(`${CSI}${cols}Gx `);
    parts.push(`${CSI}A${CSI}${cols}G`);
    usePen(lastBg);
    parts.push(`${CSI}X`);
    defaultPen();
    parts.push(`${CSI}B${CSI}G${CSI}X`);
  }
  defaultPen();
  return parts.join("");
}

/**
 * @param {import("@xterm/headless").Terminal | import("@xterm/xterm").Terminal} term
 * @param {{ scrollback?: number }} [options] lines of history to include (default: all)
 * @returns {string}
 */
export function terminalSnapshot(term, options = {}) {
  const core = /** @type {any} */ (term)._core;
  const designators = charsetDesignators(core);
  const buffers = core.buffers;
  const normal = buffers.normal;
  const alternateActive = buffers.active === buffers.alt;
  const origin = Boolean(core.coreService.decPrivateModes.origin);

  const history = options.scrollback === undefined ? normal.ybase : Math.min(normal.ybase, Math.max(0, options.scrollback));
  let out = cellsSequence(core, normal, normal.ybase - history);
  out += bufferState(core, normal, designators);
  if (alternateActive) {
    // 1047, not 1049: the normal buffer's saved cursor was just set and 1049 would overwrite it.
    out += cursorSequence(core, normal, false) + `${CSI}0m${CSI}?1047h${CSI}H`;
    out += cellsSequence(core, buffers.alt, 0);
    out += bufferState(core, buffers.alt, designators);
  }
  const active = buffers.active;
  if (origin) out += `${CSI}?6h`;
  out += cursorSequence(core, active, origin);
  out += modeSequence(core);
  out += charsetSequence(core, designators);
  const charsets = core._charsetService;
  if (charsets.charset !== charsets._charsets[charsets.glevel] && charsets.charset === active.savedCharset) {
    // DECRC restores the charset in use without touching the designations (how a program leaving
    // the alternate screen gets here): so does this, and the cursor goes back where it was.
    out += `${ESC}8${cup(active.y - (origin ? active.scrollTop : 0), Math.min(active.x, core.cols - 1))}`;
  }
  const pen = core._inputHandler._curAttrData;
  out += penSequence(pen);
  // A link left open (OSC 8 without its closing one) belongs to the pen: what is printed next is linked.
  const urlId = extendedOf(pen).urlId;
  if (urlId !== 0) out += linkSequence(core, urlId);
  return out;
}
