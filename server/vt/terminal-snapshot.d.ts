// Types of terminal-snapshot.js (plain JavaScript so the headless worker can import it).
import type { Terminal as HeadlessTerminal } from "@xterm/headless";
import type { Terminal as BrowserTerminal } from "@xterm/xterm";

/** The SGR sequence that sets a pen (xterm.js AttributeData) from the default one. */
export function penSequence(attr: unknown, withExtended?: boolean): string;

/** Bytes that bring a freshly reset terminal of the same size to `term`'s whole state. */
export function terminalSnapshot(term: HeadlessTerminal | BrowserTerminal, options?: { scrollback?: number }): string;
