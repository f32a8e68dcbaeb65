/**
 * The terminal state @xterm/addon-serialize leaves out but a restored TUI depends on: cursor
 * visibility, the mouse report encoding, the cursor style and the scroll region. It watches the
 * program's own sequences (handlers that return false, so xterm still acts on them) and adds them
 * to the serialized copy.
 */
import type { IDisposable, Terminal } from "@xterm/xterm";

/** DECSET modes choosing how mouse reports are encoded (UTF-8, SGR, urxvt, SGR pixels). */
const MOUSE_ENCODINGS = new Set([1005, 1006, 1015, 1016]);
const CURSOR_VISIBLE = 25;

export type ModeMirror = IDisposable & {
  /** Sequences that put a freshly written serialized screen back in the tracked state. */
  restoreSequence(): string;
};

const numbers = (params: (number | number[])[]): number[] =>
  params.map((p) => (Array.isArray(p) ? (p[0] ?? 0) : p));

export function mirrorModes(terminal: Terminal): ModeMirror {
  let cursorVisible = true;
  let mouseEncoding: number | null = null;
  let cursorStyle: number | null = null;
  let scrollRegion: { top: number; bottom: number } | null = null;

  const reset = () => {
    cursorVisible = true;
    mouseEncoding = null;
    cursorStyle = null;
    scrollRegion = null;
  };

  const setMode = (on: boolean) => (params: (number | number[])[]) => {
    for (const mode of numbers(params)) {
      if (mode === CURSOR_VISIBLE) cursorVisible = on;
      else if (MOUSE_ENCODINGS.has(mode)) mouseEncoding = on ? mode : mouseEncoding === mode ? null : mouseEncoding;
    }
    return false;
  };

  const { parser } = terminal;
  const handlers: IDisposable[] = [
    parser.registerCsiHandler({ prefix: "?", final: "h" }, setMode(true)),
    parser.registerCsiHandler({ prefix: "?", final: "l" }, setMode(false)),
    parser.registerCsiHandler({ final: "r" }, (params) => {
      const [top = 0, bottom = 0] = numbers(params);
      const full = (top <= 1 && (bottom === 0 || bottom >= terminal.rows)) || (bottom !== 0 && top >= bottom);
      scrollRegion = full ? null : { top: Math.max(1, top), bottom: bottom === 0 ? terminal.rows : bottom };
      return false;
    }),
    parser.registerCsiHandler({ intermediates: " ", final: "q" }, (params) => {
      const [style = 0] = numbers(params);
      cursorStyle = style === 0 ? null : style;
      return false;
    }),
    // RIS and DECSTR put all of these back to their defaults.
    parser.registerEscHandler({ final: "c" }, () => {
      reset();
      return false;
    }),
    parser.registerCsiHandler({ intermediates: "!", final: "p" }, () => {
      reset();
      return false;
    }),
  ];

  return {
    restoreSequence() {
      let out = "";
      if (!cursorVisible) out += "\x1b[?25l";
      if (mouseEncoding !== null) out += `\x1b[?${mouseEncoding}h`;
      if (cursorStyle !== null) out += `\x1b[${cursorStyle} q`;
      // DECSTBM homes the cursor: save and restore it around the region.
      if (scrollRegion) out += `\x1b7\x1b[${scrollRegion.top};${scrollRegion.bottom}r\x1b8`;
      return out;
    },
    dispose: () => handlers.forEach((h) => h.dispose()),
  };
}
