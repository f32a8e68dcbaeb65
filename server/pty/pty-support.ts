/**
 * What both PTY implementations share: the checks that make a bad spawn fail the same way
 * under Node and Bun, the child's environment, process-group signalling, and the relay that
 * turns the runtime's events into the PtyProcess contract (one data listener, exit once).
 */
import { accessSync, constants as fsConstants, statSync } from "node:fs";
import { constants as osConstants } from "node:os";
import { delimiter, isAbsolute, join, resolve } from "node:path";
import { PTY_TERM_NAME, PtySpawnError, type PtyExit, type PtySpawnOptions } from "./pty.ts";

/** Largest size a PTY accepts: struct winsize holds unsigned shorts. */
const PTY_MAX_DIMENSION = 0xffff;

/**
 * Fail before spawning, with a stable code, when the program cannot start. node-pty would
 * otherwise report a missing command or cwd as output plus exit 1, and Bun would throw.
 */
export function assertSpawnable(options: PtySpawnOptions): void {
  const [file] = options.command;
  if (!file) throw new PtySpawnError("PTY_BAD_COMMAND", "command is empty");
  for (const [name, value] of [["cols", options.cols], ["rows", options.rows]] as const) {
    if (!Number.isInteger(value) || value < 1 || value > PTY_MAX_DIMENSION) {
      throw new PtySpawnError("PTY_BAD_SIZE", `${name} must be an integer in 1..${PTY_MAX_DIMENSION}, got ${value}`);
    }
  }
  if (!isDirectory(options.cwd)) {
    throw new PtySpawnError("PTY_CWD_NOT_FOUND", `working directory not found: ${options.cwd}`);
  }
  if (findExecutable(file, options.cwd, options.env.PATH ?? "") === null) {
    throw new PtySpawnError("PTY_COMMAND_NOT_FOUND", `command not found: ${file}`);
  }
}

/** Where argv[0] would be executed from, as execvp looks it up; null when nowhere. */
export function findExecutable(file: string, cwd: string, searchPath: string): string | null {
  if (file.includes("/")) {
    const candidate = isAbsolute(file) ? file : resolve(cwd, file);
    return isExecutableFile(candidate) ? candidate : null;
  }
  for (const dir of searchPath.split(delimiter)) {
    // An empty PATH entry means the current directory.
    const candidate = resolve(cwd, join(dir || ".", file));
    if (isExecutableFile(candidate)) return candidate;
  }
  return null;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The child's environment: the caller's, with TERM forced and without COLUMNS/LINES, which
 * a server started from a terminal may carry and which would override the PTY's real size.
 */
export function childEnvironment(options: PtySpawnOptions): Record<string, string> {
  const env: Record<string, string> = { ...options.env, TERM: PTY_TERM_NAME };
  delete env.COLUMNS;
  delete env.LINES;
  return env;
}

/**
 * Signal the program's process group (both runtimes make the child a session and group
 * leader), so helpers it started in the same group go too; the pid alone as a fallback.
 * A process that is already gone is not an error.
 */
export function signalProcessGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
    return;
  } catch {
    // no such group (or not allowed): try the process itself
  }
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

/** PtyExit from a status and a signal given as a number or a name (0 / null / undefined: none). */
export function toPtyExit(status: number | null, signal: number | string | null | undefined): PtyExit {
  const signalNumber = typeof signal === "string" ? (osConstants.signals as Record<string, number>)[signal] ?? null : signal || null;
  if (signalNumber !== null) return { exitCode: 128 + signalNumber, signal: signalNumber };
  return { exitCode: status ?? 0, signal: null };
}

/**
 * Delivers a runtime's output and exit as the PtyProcess contract demands: chunks that arrive
 * before the session registers its listener are kept, nothing is delivered after the exit,
 * and the exit is reported exactly once (listener and `exited` together).
 */
export class PtyEventRelay {
  readonly exited: Promise<PtyExit>;
  private dataListener: ((chunk: Uint8Array) => void) | null = null;
  /** the listener takes lent chunks (onLentData) */
  private borrows = false;
  private early: Uint8Array[] = [];
  private exitListener: ((exit: PtyExit) => void) | null = null;
  private exit: PtyExit | null = null;
  private settle!: (exit: PtyExit) => void;

  constructor() {
    this.exited = new Promise((resolve) => (this.settle = resolve));
  }

  get hasExited(): boolean {
    return this.exit !== null;
  }

  onData(listener: (chunk: Uint8Array) => void): void {
    this.listen(listener, false);
  }

  /** PtyProcess.onLentData: chunks delivered as lent reach it as they are, never copied. */
  onLentData(listener: (chunk: Uint8Array) => void): void {
    this.listen(listener, true);
  }

  private listen(listener: (chunk: Uint8Array) => void, borrows: boolean): void {
    this.dataListener = listener;
    this.borrows = borrows;
    const early = this.early;
    this.early = [];
    for (const chunk of early) listener(chunk);
  }

  onExit(listener: (exit: PtyExit) => void): void {
    if (this.exit) {
      const exit = this.exit;
      queueMicrotask(() => listener(exit));
      return;
    }
    this.exitListener = listener;
  }

  /** `lent`: the chunk is the runtime's read buffer, reused after this returns; it is copied for whoever keeps it. */
  deliverData(chunk: Uint8Array, lent = false): void {
    if (this.exit || chunk.byteLength === 0) return;
    if (this.dataListener) this.dataListener(lent && !this.borrows ? Buffer.from(chunk) : chunk);
    else this.early.push(lent ? Buffer.from(chunk) : chunk);
  }

  deliverExit(exit: PtyExit): void {
    if (this.exit) return;
    this.exit = exit;
    try {
      this.exitListener?.(exit);
    } finally {
      this.settle(exit);
    }
  }
}
