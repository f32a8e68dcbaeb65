/**
 * PtyProcess on Bun's own terminal API (`Bun.spawn(argv, { terminal })`, Bun >= 1.3.5), for
 * Bun, where node-pty's child gets SIGHUP. Only ./index.ts loads this file, and only under Bun.
 *
 * What the API allows and what it does not:
 * - write, resize, signals, exit status: yes. `terminal.write` accepts every byte and buffers
 *   what the kernel does not take at once, so writes are never partial.
 * - pause/resume: Bun offers no way to stop reading a terminal, so both are no-ops here. The
 *   program is never blocked by a slow consumer under Bun; the session's ring and the hub's
 *   bounded send queues (slow connections are closed with 4408) are what keep memory bounded.
 * - "all output before exit": the process's `exited` and the terminal's `exit` callback (reader
 *   EOF, after Bun drained the terminal) are independent; the exit is reported when both came,
 *   or when the cap passes after the process ended (a background process holding the terminal).
 */
import { PTY_TERM_NAME, PtySpawnError, type PtyProcess, type PtySpawnOptions } from "./pty.ts";
import { assertSpawnable, childEnvironment, PtyEventRelay, signalProcessGroup, toPtyExit } from "./pty-support.ts";

/** Longest wait for the terminal's reader EOF after the process ended, before reporting the exit anyway. */
export const EXIT_DRAIN_MAX_MS = 2_000;

// The slice of Bun's API used here, declared locally: the Node type-check has no Bun types.
type BunTerminal = {
  write(data: string | Uint8Array): number;
  resize(cols: number, rows: number): void;
  close(): void;
  readonly closed: boolean;
};
type BunTerminalOptions = {
  cols: number;
  rows: number;
  name: string;
  data(terminal: BunTerminal, data: Uint8Array): void;
  /** reader EOF or read error; its status is the stream's, not the program's */
  exit(terminal: BunTerminal, status: number, signal: string | null): void;
};
type BunSubprocess = {
  readonly pid: number;
  /** resolves once the process has ended */
  readonly exited: Promise<number>;
  readonly exitCode: number | null;
  /** e.g. "SIGKILL" when a signal ended it */
  readonly signalCode: string | null;
  readonly terminal: BunTerminal | undefined;
};
type BunRuntime = {
  spawn(argv: string[], options: { cwd: string; env: Record<string, string>; terminal: BunTerminalOptions }): BunSubprocess;
};

export function spawnBunPty(options: PtySpawnOptions): PtyProcess {
  const bun = (globalThis as { Bun?: BunRuntime }).Bun;
  if (!bun) throw new PtySpawnError("PTY_SPAWN_FAILED", "Bun's terminal API is only available under Bun");
  assertSpawnable(options);

  const relay = new PtyEventRelay();
  let readerEnded!: () => void;
  const readerEof = new Promise<void>((resolve) => (readerEnded = resolve));
  let proc: BunSubprocess;
  try {
    proc = bun.spawn(options.command, {
      cwd: options.cwd,
      env: childEnvironment(options),
      terminal: {
        cols: options.cols,
        rows: options.rows,
        name: PTY_TERM_NAME,
        // Bun hands over a fresh array per read, so the chunk can be kept without a copy.
        data: (_terminal, bytes) => relay.deliverData(bytes),
        exit: () => readerEnded(),
      },
    });
  } catch (err) {
    throw new PtySpawnError("PTY_SPAWN_FAILED", `cannot start ${options.command[0]}: ${(err as Error).message}`, { cause: err });
  }
  const terminal = proc.terminal;
  if (!terminal) throw new PtySpawnError("PTY_SPAWN_FAILED", "Bun.spawn returned no terminal");

  void proc.exited.then(async () => {
    let cap: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([readerEof, new Promise<void>((resolve) => (cap = setTimeout(resolve, EXIT_DRAIN_MAX_MS)))]);
    clearTimeout(cap);
    relay.deliverExit(toPtyExit(proc.exitCode, proc.signalCode));
    // The terminal belongs to this one run: release the PTY master.
    if (!terminal.closed) terminal.close();
  });

  return {
    pid: proc.pid,
    exited: relay.exited,
    onData: (listener) => relay.onData(listener),
    onExit: (listener) => relay.onExit(listener),
    write(data) {
      if (relay.hasExited || terminal.closed) return;
      terminal.write(data);
    },
    // Bun's terminal takes every byte at once (it buffers what the kernel refuses).
    drained: () => Promise.resolve(),
    resize(cols, rows) {
      if (relay.hasExited || terminal.closed) return;
      if (!Number.isInteger(cols) || !Number.isInteger(rows) || cols < 1 || rows < 1) {
        throw new RangeError(`PTY size must be positive integers, got ${cols}x${rows}`);
      }
      terminal.resize(cols, rows);
    },
    /** No-op: Bun cannot stop reading a terminal (see the file comment). */
    pause() {},
    /** No-op, like pause. */
    resume() {},
    kill(signal = "SIGHUP") {
      if (relay.hasExited) return;
      signalProcessGroup(proc.pid, signal);
    },
  };
}
