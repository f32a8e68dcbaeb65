/**
 * The bytes the Agent API types into a shell for one run: `eval '<command>'`. A run's `cwd`
 * and `env` apply to that run only, the way a person would scope them: the command runs in a
 * subshell, `( cd -- <cwd> && export K=V && eval <command> )`, so neither leaks into the
 * interactive shell afterwards; a run without them runs in the shell itself (`cd dir` sticks).
 */
import { bracketPasteText } from "../contract/bracketed-paste.ts";

export type LineRequest = { command: string; cwd?: string; env?: Record<string, string> };

/** How the line can reach the shell. */
export type LineStyle = {
  /** the shell's line editor has bracketed paste on: the line goes in as one paste */
  bracketedPaste: boolean;
  /** an interactive bash or zsh: it understands `$'…'`, and expands history in what is typed */
  ansiCQuoting: boolean;
};

/** Ctrl-U: whatever a person left half-typed at the prompt is cut (to the kill ring), not run with ours. */
const KILL_LINE = "\x15";

/** `'…'` for any POSIX shell. */
export function singleQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** `$'…'` with every control character escaped, for bash and zsh. */
export function ansiCQuote(text: string): string {
  const body = text.replace(/[\\']/g, "\\$&").replace(/[\x00-\x1f\x7f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
  return `$'${body}'`;
}

/**
 * A word quoted for the shell, always on one line: `'…'`, or when it holds control characters
 * `$'…'` (bash, zsh) or `"$(printf '%b' '…')"` (any POSIX shell; trailing newlines are lost there).
 */
function quote(text: string, style: LineStyle): string {
  if (!hasControls(text)) return singleQuote(text);
  if (style.ansiCQuoting) return ansiCQuote(text);
  const escaped = text.replace(/\\/g, "\\\\").replace(/[\x00-\x1f\x7f]/g, (c) => `\\0${c.charCodeAt(0).toString(8).padStart(3, "0")}`);
  return `"$(printf '%b' ${singleQuote(escaped)})"`;
}

function hasControls(text: string): boolean {
  return /[\x00-\x1f\x7f]/.test(text);
}

/**
 * The shell command line for a run. The command is always handed to `eval` in quotes, so the
 * shell reads exactly one complete command whatever the text is: history expansion (`!`) never
 * applies, several lines run as one command with one exit status, and an incomplete command
 * (`if then`, an open quote) fails with the shell's syntax error instead of leaving the shell
 * waiting at a continuation prompt. Aliases and functions work as typed (eval parses at run time).
 */
export function commandLine(request: LineRequest, style: LineStyle): string {
  const { command, cwd, env } = request;
  const envEntries = Object.entries(env ?? {});
  const run = `eval ${quote(command, style)}`;
  if (cwd === undefined && envEntries.length === 0) return run;
  const steps: string[] = [];
  if (cwd !== undefined) steps.push(`cd -- ${quote(cwd, style)}`);
  for (const [name, value] of envEntries) steps.push(`export ${name}=${quote(value, style)}`);
  steps.push(run);
  return `( ${steps.join(" && ")} )`;
}

/** The keystrokes that enter a `commandLine` (one line, no control characters) and press Enter once. */
export function keystrokes(line: string, style: LineStyle): string {
  return style.bracketedPaste ? `${KILL_LINE}${bracketPasteText(line)}\r` : `${KILL_LINE}${line}\r`;
}
