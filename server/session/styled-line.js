// @ts-check
/**
 * One buffer line of a headless xterm as text with SGR escapes: what the Agent API's
 * `read` returns with `strip_ansi: false`, so a program can see colours and emphasis
 * (a red "FAILED", a dimmed suggestion) and not only the characters.
 *
 * Each change of style is written as one `CSI 0;…m` (a full reset, then the attributes),
 * so every line stands alone: a reader can take any line without the ones before it.
 * A line that ends styled ends with `CSI 0m`. Trailing unstyled blanks are trimmed, like
 * the plain lines; styled blanks (a coloured bar) are kept.
 *
 * Plain JavaScript (JSDoc types) because the headless worker, which is plain JavaScript
 * for its loader's sake, imports it.
 */

/** @typedef {import("@xterm/headless").IBufferLine} IBufferLine */
/** @typedef {import("@xterm/headless").IBufferCell} IBufferCell */

const ESC = "\x1b";

/** @param {"fg" | "bg"} which @param {IBufferCell} cell @returns {string[]} */
function colourParams(which, cell) {
  const isFg = which === "fg";
  if (isFg ? cell.isFgDefault() : cell.isBgDefault()) return [];
  const colour = isFg ? cell.getFgColor() : cell.getBgColor();
  if (isFg ? cell.isFgRGB() : cell.isBgRGB()) {
    return [isFg ? "38" : "48", "2", String((colour >> 16) & 0xff), String((colour >> 8) & 0xff), String(colour & 0xff)];
  }
  // Palette: 0–7 and 8–15 as the short codes programs usually write, the rest as 256-colour.
  if (colour < 8) return [String((isFg ? 30 : 40) + colour)];
  if (colour < 16) return [String((isFg ? 90 : 100) + colour - 8)];
  return [isFg ? "38" : "48", "5", String(colour)];
}

/** The SGR parameters of a cell's style, "" for the default style. @param {IBufferCell} cell */
function styleOf(cell) {
  /** @type {string[]} */
  const params = [];
  if (cell.isBold()) params.push("1");
  if (cell.isDim()) params.push("2");
  if (cell.isItalic()) params.push("3");
  if (cell.isUnderline()) params.push("4");
  if (cell.isBlink()) params.push("5");
  if (cell.isInverse()) params.push("7");
  if (cell.isInvisible()) params.push("8");
  if (cell.isStrikethrough()) params.push("9");
  if (cell.isOverline()) params.push("53");
  params.push(...colourParams("fg", cell), ...colourParams("bg", cell));
  return params.join(";");
}

/**
 * @param {IBufferLine | undefined} line
 * @param {IBufferCell} scratch  a cell to reuse (`buffer.getNullCell()`)
 * @returns {string}
 */
export function styledLine(line, scratch) {
  if (!line) return "";
  /** @type {string[]} */
  const parts = [];
  let current = "";
  // Length of `parts` up to the last cell worth keeping (not an unstyled blank).
  let keep = 0;
  let keepStyle = "";
  for (let x = 0; x < line.length; x++) {
    const cell = line.getCell(x, scratch);
    if (!cell || cell.getWidth() === 0) continue; // the right half of a wide character
    const style = styleOf(cell);
    if (style !== current) {
      parts.push(`${ESC}[${style === "" ? "0" : `0;${style}`}m`);
      current = style;
    }
    const chars = cell.getChars() || " ";
    parts.push(chars);
    if (chars !== " " || style !== "") {
      keep = parts.length;
      keepStyle = style;
    }
  }
  const text = parts.slice(0, keep).join("");
  return keepStyle === "" ? text : `${text}${ESC}[0m`;
}
