/**
 * Turns a command's terminal output into the text a person saw: escape sequences
 * removed, `\r\n` → `\n`, and carriage-return / backspace / erase-line redraws applied
 * per line, so a progress bar that rewrites its line keeps only its final text.
 * Only in-line cursor motion is rendered (CR, BS, CSI K/G/C/D); output that moves the
 * cursor up and down (full-screen programs, multi-line spinners) is beyond a text API.
 */

const ESC = "\x1b";

/** The output as text: rendered (see above) when `stripAnsi`, else only `\r\n` → `\n`. */
export function outputText(raw: string, stripAnsi: boolean): string {
  if (!stripAnsi) return raw.replace(/\r\n/g, "\n");
  return renderLines(raw);
}

/** Lines that need no rendering: no ESC, CR, BS or other C0 control besides TAB. */
const NEEDS_RENDERING = /[\x00-\x08\x0b-\x1f\x7f]/;

function renderLines(raw: string): string {
  if (!NEEDS_RENDERING.test(raw)) return raw;
  const out: string[] = [];
  const screen = new LineCursor();
  let i = 0;
  const n = raw.length;
  while (i < n) {
    const ch = raw[i]!;
    if (ch === ESC) {
      i = skipEscape(raw, i, screen);
      continue;
    }
    if (ch === "\n") {
      out.push(screen.take(), "\n");
      i++;
      continue;
    }
    if (ch === "\r") screen.col = 0;
    else if (ch === "\b") screen.col = Math.max(0, screen.col - 1);
    else if (ch === "\t" || (ch >= " " && ch !== "\x7f")) {
      // Surrogate pairs stay together as one cell.
      const code = raw.charCodeAt(i);
      if (code >= 0xd800 && code <= 0xdbff && i + 1 < n) {
        screen.put(raw.slice(i, i + 2));
        i += 2;
        continue;
      }
      screen.put(ch);
    }
    // other C0 controls (BEL, SO, SI, …) print nothing
    i++;
  }
  out.push(screen.take());
  return out.join("");
}

/** One line being drawn: cells and the cursor column. */
class LineCursor {
  cells: string[] = [];
  col = 0;

  put(cell: string): void {
    while (this.cells.length < this.col) this.cells.push(" ");
    this.cells[this.col++] = cell;
  }

  /** CSI K: 0 = to the end, 1 = from the start, 2 = the whole line. */
  erase(mode: number): void {
    if (mode === 0) this.cells.length = Math.min(this.cells.length, this.col);
    else if (mode === 1) for (let c = 0; c <= this.col && c < this.cells.length; c++) this.cells[c] = " ";
    else if (mode === 2) this.cells.length = 0;
  }

  take(): string {
    const text = this.cells.join("");
    this.cells = [];
    this.col = 0;
    return text;
  }
}

/** Skip the escape sequence at `i` (applying the in-line cursor motions); returns the index after it. */
function skipEscape(raw: string, i: number, line: LineCursor): number {
  const n = raw.length;
  const next = raw[i + 1];
  if (next === undefined) return n;
  if (next === "[") {
    let j = i + 2;
    while (j < n && raw.charCodeAt(j) >= 0x30 && raw.charCodeAt(j) <= 0x3f) j++; // parameters
    const params = raw.slice(i + 2, j);
    while (j < n && raw.charCodeAt(j) >= 0x20 && raw.charCodeAt(j) <= 0x2f) j++; // intermediates
    if (j >= n) return n;
    applyCsi(raw[j]!, params, line);
    return j + 1;
  }
  if (next === "]" || next === "P" || next === "X" || next === "^" || next === "_") {
    // OSC ends at BEL or ST; DCS, SOS, PM and APC at ST.
    for (let j = i + 2; j < n; j++) {
      const c = raw[j];
      if (c === "\x07" && next === "]") return j + 1;
      if (c === ESC) return raw[j + 1] === "\\" ? j + 2 : j;
      if (c === "\x18" || c === "\x1a") return j + 1;
    }
    return n;
  }
  // ESC, any intermediates, one final byte (charset selection, keypad modes, …).
  let j = i + 1;
  while (j < n && raw.charCodeAt(j) >= 0x20 && raw.charCodeAt(j) <= 0x2f) j++;
  return Math.min(n, j + 1);
}

function applyCsi(final: string, params: string, line: LineCursor): void {
  if (params.startsWith("?") || params.startsWith(">") || params.startsWith("<") || params.startsWith("=")) return;
  const first = params === "" ? 0 : Number.parseInt(params.split(";")[0]!, 10) || 0;
  switch (final) {
    case "K":
      line.erase(first);
      break;
    case "G":
    case "`":
      line.col = Math.max(0, (first || 1) - 1);
      break;
    case "C":
      line.col += first || 1;
      break;
    case "D":
      line.col = Math.max(0, line.col - (first || 1));
      break;
    default:
      break; // SGR and everything else: no text
  }
}
