/**
 * The terminal modes a replay snapshot must restore, tracked from the program's
 * output independently of the ring buffer (evicted bytes do not lose them).
 *
 * Semantics follow xterm.js, which is what every browser client and the server's
 * headless screen run: e.g. resetting any mouse tracking mode turns tracking off,
 * and a soft reset (DECSTR) leaves mouse modes and the alternate screen alone.
 */

/** Active mouse tracking protocol: the DEC private mode that enabled it, 0 = off. */
export type MouseTracking = 0 | 9 | 1000 | 1002 | 1003;
/** Active mouse coordinate encoding: the DEC private mode that enabled it, 0 = the default X10 bytes. */
export type MouseEncoding = 0 | 1005 | 1006 | 1015 | 1016;

export type TerminalModes = {
  /** DECCKM, `CSI ? 1 h` */
  readonly applicationCursorKeys: boolean;
  /** DECOM, `CSI ? 6 h` */
  readonly originMode: boolean;
  /** DECAWM, `CSI ? 7 h` (on by default) */
  readonly autoWrap: boolean;
  /** DECTCEM, `CSI ? 25 h` (on by default) */
  readonly cursorVisible: boolean;
  /** `CSI ? 47 h`, `? 1047 h` or `? 1049 h`: all switch the same alternate buffer */
  readonly alternateScreen: boolean;
  /** DECKPAM `ESC =` / DECKPNM `ESC >`, also DECNKM `CSI ? 66 h` */
  readonly applicationKeypad: boolean;
  readonly mouseTracking: MouseTracking;
  readonly mouseEncoding: MouseEncoding;
  /** `CSI ? 1004 h` */
  readonly focusEvents: boolean;
  /** `CSI ? 2004 h` */
  readonly bracketedPaste: boolean;
  /** `CSI ? 2031 h`: the program wants colour-scheme (dark/light) reports */
  readonly colorSchemeReports: boolean;
};

type BooleanMode = {
  -readonly [K in keyof TerminalModes]: TerminalModes[K] extends boolean ? K : never;
}[keyof TerminalModes];

/** A freshly reset xterm. */
export const DEFAULT_TERMINAL_MODES: TerminalModes = Object.freeze({
  applicationCursorKeys: false,
  originMode: false,
  autoWrap: true,
  cursorVisible: true,
  alternateScreen: false,
  applicationKeypad: false,
  mouseTracking: 0,
  mouseEncoding: 0,
  focusEvents: false,
  bracketedPaste: false,
  colorSchemeReports: false,
});

/** DEC private mode number → the boolean it sets. The first number per field is its canonical one. */
const BOOLEAN_MODES = new Map<number, BooleanMode>([
  [1, "applicationCursorKeys"],
  [6, "originMode"],
  [7, "autoWrap"],
  [25, "cursorVisible"],
  [1049, "alternateScreen"],
  [47, "alternateScreen"],
  [1047, "alternateScreen"],
  [66, "applicationKeypad"],
  [1004, "focusEvents"],
  [2004, "bracketedPaste"],
  [2031, "colorSchemeReports"],
]);

const CANONICAL_MODE = new Map<BooleanMode, number>();
for (const [mode, field] of BOOLEAN_MODES) if (!CANONICAL_MODE.has(field)) CANONICAL_MODE.set(field, mode);

/** What xterm.js's soft reset (DECSTR, `CSI ! p`) puts back to default. */
const SOFT_RESET_FIELDS: readonly BooleanMode[] = [
  "applicationCursorKeys",
  "originMode",
  "autoWrap",
  "cursorVisible",
  "applicationKeypad",
  "focusEvents",
  "bracketedPaste",
];

/** Reports a change: the DEC private mode number concerned and its new state. */
export type ModeChangeListener = (mode: number, on: boolean) => void;

export class ModeTracker {
  private state: { -readonly [K in keyof TerminalModes]: TerminalModes[K] } = { ...DEFAULT_TERMINAL_MODES };
  private frozen: TerminalModes | null = DEFAULT_TERMINAL_MODES;

  constructor(private readonly changed: ModeChangeListener) {}

  /** A readonly snapshot; the same object until a mode changes. */
  get modes(): TerminalModes {
    return (this.frozen ??= Object.freeze({ ...this.state }));
  }

  get bracketedPaste(): boolean {
    return this.state.bracketedPaste;
  }

  get colorSchemeReports(): boolean {
    return this.state.colorSchemeReports;
  }

  get alternateScreen(): boolean {
    return this.state.alternateScreen;
  }

  /** Apply DECSET (`on`) or DECRST of one DEC private mode; untracked modes are ignored. */
  setPrivateMode(mode: number, on: boolean): void {
    const field = BOOLEAN_MODES.get(mode);
    if (field !== undefined) {
      this.setBoolean(field, on, mode);
    } else if (mode === 9 || mode === 1000 || mode === 1002 || mode === 1003) {
      this.setMouse("mouseTracking", on ? mode : 0, mode, on);
    } else if (mode === 1005 || mode === 1006 || mode === 1015 || mode === 1016) {
      this.setMouse("mouseEncoding", on ? mode : 0, mode, on);
    }
  }

  /** RIS (`ESC c`): every mode back to default. */
  hardReset(): void {
    for (const field of CANONICAL_MODE.keys()) this.setBoolean(field, DEFAULT_TERMINAL_MODES[field]);
    if (this.state.mouseTracking !== 0) this.setMouse("mouseTracking", 0, this.state.mouseTracking, false);
    if (this.state.mouseEncoding !== 0) this.setMouse("mouseEncoding", 0, this.state.mouseEncoding, false);
  }

  /** DECSTR (`CSI ! p`). */
  softReset(): void {
    for (const field of SOFT_RESET_FIELDS) this.setBoolean(field, DEFAULT_TERMINAL_MODES[field]);
  }

  /** Back to a fresh terminal without reporting changes (new generation). */
  clear(): void {
    this.state = { ...DEFAULT_TERMINAL_MODES };
    this.frozen = DEFAULT_TERMINAL_MODES;
  }

  /**
   * Bytes that bring a freshly reset xterm to the tracked modes: only modes that
   * differ from the defaults, the alternate screen first (entering it with 1049).
   */
  restoreSequence(): string {
    const m = this.state;
    let out = "";
    if (m.alternateScreen) out += "\x1b[?1049h";
    if (m.applicationCursorKeys) out += "\x1b[?1h";
    if (m.applicationKeypad) out += "\x1b=";
    if (m.originMode) out += "\x1b[?6h";
    if (!m.autoWrap) out += "\x1b[?7l";
    if (!m.cursorVisible) out += "\x1b[?25l";
    if (m.mouseTracking !== 0) out += `\x1b[?${m.mouseTracking}h`;
    if (m.mouseEncoding !== 0) out += `\x1b[?${m.mouseEncoding}h`;
    if (m.focusEvents) out += "\x1b[?1004h";
    if (m.bracketedPaste) out += "\x1b[?2004h";
    if (m.colorSchemeReports) out += "\x1b[?2031h";
    return out;
  }

  private setBoolean(field: BooleanMode, on: boolean, mode = CANONICAL_MODE.get(field)!): void {
    if (this.state[field] === on) return;
    this.state[field] = on;
    this.frozen = null;
    this.changed(mode, on);
  }

  private setMouse<K extends "mouseTracking" | "mouseEncoding">(
    field: K,
    value: TerminalModes[K],
    mode: number,
    on: boolean,
  ): void {
    if (this.state[field] === value) return;
    this.state[field] = value;
    this.frozen = null;
    this.changed(mode, on);
  }
}
