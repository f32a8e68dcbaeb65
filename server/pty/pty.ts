/**
 * The one interface the session core uses to host a program in a pseudo-terminal.
 * Runtime differences (node-pty under Node, Bun.spawn({ terminal }) under Bun) live
 * behind it; `spawnPty` in ./index.ts picks the implementation in one place.
 */

export type PtySpawnOptions = {
  /** argv; argv[0] is looked up in PATH */
  command: string[];
  cwd: string;
  /** full environment of the child (the caller merges process.env); TERM is forced to xterm-256color */
  env: Record<string, string>;
  cols: number;
  rows: number;
};

export type PtyExit = {
  /** the program's exit status, or 128 + signal number when it was killed by a signal */
  exitCode: number;
  /** signal number that ended it, if any */
  signal: number | null;
};

export interface PtyProcess {
  readonly pid: number;
  /** Output as raw bytes, never decoded. One listener (the session). */
  onData(listener: (chunk: Uint8Array) => void): void;
  /** Called once, after the last onData chunk has been delivered. */
  onExit(listener: (exit: PtyExit) => void): void;
  write(data: Uint8Array | string): void;
  resize(cols: number, rows: number): void;
  /** Stop reading from the PTY (back-pressure); the kernel buffer then blocks the program. */
  pause(): void;
  resume(): void;
  /** Send a signal (default SIGHUP) to the program's process group. */
  kill(signal?: NodeJS.Signals): void;
}

export type SpawnPty = (options: PtySpawnOptions) => PtyProcess;
