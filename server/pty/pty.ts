/**
 * The one interface the session core uses to host a program in a pseudo-terminal.
 * Runtime differences (node-pty under Node, Bun.spawn({ terminal }) under Bun) live
 * behind it; `spawnPty` in ./index.ts picks the implementation in one place.
 */

/** The terminal type every hosted program sees (TERM); both implementations force it. */
export const PTY_TERM_NAME = "xterm-256color";

export type PtySpawnOptions = {
  /** argv; argv[0] is looked up in PATH */
  command: string[];
  cwd: string;
  /** full environment of the child (the caller merges process.env); TERM is forced to xterm-256color */
  env: Record<string, string>;
  cols: number;
  rows: number;
  /** which session and run this is: a session host keeps it (docs/design.md, What survives a restart); a local PTY ignores it */
  label?: RunLabel;
};

/** What a session host keeps about the session of a run, so that a restarted server can take it over. */
export type RunLabel = {
  sessionId: string;
  generation: string;
  /** the session's own command and environment (the run's may differ) */
  command: string[];
  env: Record<string, string>;
  createdAt: number;
  /** the title a user gave it */
  title: string | null;
  hybrid: boolean;
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
  /**
   * Instead of onData where the runtime can: the chunk is lent, valid only until the listener
   * returns (it is the runtime's read buffer), so a listener that keeps bytes copies them. It saves
   * a copy into fresh memory per read for a listener that copies anyway (the session's ring).
   */
  onLentData?(listener: (chunk: Uint8Array) => void): void;
  /** Called once, after the last onData chunk has been delivered. */
  onExit(listener: (exit: PtyExit) => void): void;
  /** Settles with the same value as onExit, at the same moment; for helpers such as `terminate`. */
  readonly exited: Promise<PtyExit>;
  /** Ignored once the program has exited. Bytes are queued in order and never interleave with later writes. */
  write(data: Uint8Array | string): void;
  /**
   * Resolves once every byte written so far has been taken by the kernel (or the program has
   * exited). A submission is `written` only then.
   */
  drained(): Promise<void>;
  /** Ignored once the program has exited. */
  resize(cols: number, rows: number): void;
  /** Stop reading from the PTY (back-pressure); the kernel buffer then blocks the program. */
  pause(): void;
  resume(): void;
  /** Send a signal (default SIGHUP) to the program's process group. Ignored once it has exited. */
  kill(signal?: NodeJS.Signals): void;
  /** Settles once the program runs (its pid known); rejects when it could not start. A local PTY runs at once and has none. */
  readonly ready?: Promise<void>;
  /**
   * Write a submission's bytes together with its record, so that they are written at most once
   * even across a restart of the server (a PTY in the session host has it; a local one does not).
   */
  submit?(id: string, clientId: string, createdAt: number, bytes: Uint8Array): Promise<"written" | "partial">;
  /**
   * Stop reading and give the terminal out, for a successor session host to take the program
   * over (docs/design.md, What survives a restart). Every byte read so far has been delivered
   * through onData when it resolves; null when the program has exited (or is exiting). Only a
   * PTY whose master descriptor this process holds has it.
   */
  handover?(): Promise<PtyHandover | null>;
}

/** A program's terminal on its way to a successor host. */
export type PtyHandover = {
  /** the terminal's master descriptor, still open here until `release` */
  fd: number;
  /** the terminal's program side (/dev/pts/N), which the successor may hold open as this process did */
  ptsName: string | null;
  /**
   * The successor has its own copy: close this process's copies of the terminal. The program
   * runs on; its exit is still reported through onExit and `exited` (this process waits for it),
   * and kill still signals it. Nothing is read or written here any more.
   */
  release(): void;
  /** The handover failed: read and write as before. */
  abort(): void;
};

export type SpawnPty = (options: PtySpawnOptions) => PtyProcess;

export type PtyErrorCode =
  /** command is empty */
  | "PTY_BAD_COMMAND"
  /** cols or rows is not a positive integer */
  | "PTY_BAD_SIZE"
  /** cwd does not exist or is not a directory */
  | "PTY_CWD_NOT_FOUND"
  /** argv[0] is not an executable file, directly or in PATH */
  | "PTY_COMMAND_NOT_FOUND"
  /** the runtime refused to start the program for another reason */
  | "PTY_SPAWN_FAILED";

/** Thrown synchronously by a SpawnPty when the program cannot be started; nothing was spawned. */
export class PtySpawnError extends Error {
  readonly code: PtyErrorCode;
  constructor(code: PtyErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "PtySpawnError";
    this.code = code;
  }
}
