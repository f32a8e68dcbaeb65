/**
 * The terminal `webmux attach` runs in: raw mode, its size and SIGWINCH, and putting it back the
 * way a shell expects after detaching, whatever modes the session's program switched on in it.
 */
import { clampGrid } from "../contract/protocol.ts";
import type { TerminalModes } from "../vt/terminal-modes.ts";
import type { QueryScanner } from "./query-scanner.ts";

export type TerminalSize = { cols: number; rows: number };

/** Full reset (RIS): what a `reset` replay asks for before its snapshot. */
export const RESET_TERMINAL = "\x1bc";

/** The size of the terminal on stdout, clamped to what the protocol accepts; null when stdout is not a terminal. */
export function localTerminalSize(stdout: NodeJS.WriteStream = process.stdout): TerminalSize | null {
  if (!stdout.isTTY || !stdout.columns || !stdout.rows) return null;
  return clampGrid(stdout.columns, stdout.rows);
}

/**
 * Bytes that undo what the program left switched on in the local terminal. Modes that are harmless
 * to reset are always reset; the few whose reset has side effects only when they were seen on:
 * leaving the alternate screen (1049 restores the cursor), origin mode (resetting homes the
 * cursor), and the keyboard protocols (an unknown `CSI > … m` could be taken for SGR).
 */
export function restoreSequence(modes: TerminalModes, keyboard: Pick<QueryScanner, "kittyPushes" | "modifyOtherKeys">): string {
  let out = "\x1b[0m"; // colours and attributes
  if (modes.alternateScreen) out += "\x1b[?1049l";
  if (modes.originMode) out += "\x1b[?6l";
  out += "\x1b[?1l\x1b>"; // cursor keys and keypad back to normal
  out += "\x1b[?7h\x1b[?25h"; // autowrap on, cursor visible
  out += "\x1b[?9l\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1005l\x1b[?1006l\x1b[?1015l\x1b[?1016l"; // mouse off
  out += "\x1b[?1004l\x1b[?2004l"; // focus events, bracketed paste
  // detaching turns the local terminal's colour-scheme reports off (docs/protocol.md § Colour-scheme reports (mode 2031))
  out += "\x1b[?2031l";
  if (keyboard.kittyPushes > 0) out += `\x1b[<${keyboard.kittyPushes}u`;
  if (keyboard.modifyOtherKeys > 0) out += "\x1b[>4m";
  return out;
}

/** stdin/stdout of the CLI as a terminal: raw mode on entry, restored exactly once on leave. */
export class LocalTerminal {
  private raw = false;
  private readonly resizeListeners = new Set<() => void>();

  constructor(
    readonly stdin: NodeJS.ReadStream = process.stdin,
    readonly stdout: NodeJS.WriteStream = process.stdout,
  ) {}

  /** stdout is a terminal: the CLI may write its own control sequences (reset, queries, restore). */
  get isTerminal(): boolean {
    return this.stdout.isTTY === true;
  }

  size(): TerminalSize | null {
    return localTerminalSize(this.stdout);
  }

  /** Raw mode (every key goes to the program, Ctrl-C included) and reading stdin as bytes. */
  enter(onInput: (chunk: Uint8Array) => void, onResize: () => void): void {
    if (this.stdin.isTTY && !this.raw) {
      this.stdin.setRawMode(true);
      this.raw = true;
    }
    this.stdin.on("data", onInput);
    this.stdin.resume();
    if (this.stdout.isTTY) {
      this.stdout.on("resize", onResize);
      this.resizeListeners.add(onResize);
    }
  }

  /** Write output; false when stdout is backed up (wait for `drain`). */
  write(data: Uint8Array | string): boolean {
    return this.stdout.write(data);
  }

  onDrain(listener: () => void): void {
    this.stdout.once("drain", listener);
  }

  /** Undo raw mode and the program's modes; stop reading so the process can exit. */
  leave(restore: string): void {
    if (this.isTerminal && restore) this.stdout.write(restore);
    for (const listener of this.resizeListeners) this.stdout.off("resize", listener);
    this.resizeListeners.clear();
    this.stdin.removeAllListeners("data");
    this.stdin.pause();
    if (this.raw) {
      this.stdin.setRawMode(false);
      this.raw = false;
    }
  }
}
