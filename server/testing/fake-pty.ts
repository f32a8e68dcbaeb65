import type { PtyExit, PtyProcess, PtySpawnOptions, SpawnPty } from "../pty/pty.ts";

/**
 * A pseudo-terminal whose program is the test: `emit` hands bytes to the session as a real read
 * would, and what the session does to the PTY (writes, sizes, pause/resume) is recorded. For unit
 * tests of the session core and the hub without a process or a socket.
 */
export class FakePty implements PtyProcess {
  pid = 4242;
  readonly exited: Promise<PtyExit>;
  /** set by `startLater`: the program is still being started, as in the session host */
  ready?: Promise<void>;
  /** everything written to the program, in order */
  readonly writes: string[] = [];
  /** every PTY size set, including a redraw request's transient one */
  readonly sizes: Array<[number, number]> = [];
  paused = false;
  pauses = 0;
  resumes = 0;
  private listener: ((chunk: Uint8Array) => void) | null = null;
  private end!: (exit: PtyExit) => void;
  private ended = false;

  constructor(readonly options: PtySpawnOptions) {
    this.exited = new Promise<PtyExit>((resolve) => (this.end = resolve));
  }

  /** The program is still starting (pid 0, as in the session host) until the returned function is called. */
  startLater(): () => void {
    this.pid = 0;
    let started!: () => void;
    this.ready = new Promise((resolve) => (started = resolve));
    return () => {
      this.pid = 4242;
      started();
    };
  }

  /** Output of the program, delivered at once (the session's `output` event fires inside). */
  emit(data: string | Uint8Array): void {
    this.listener!(typeof data === "string" ? new TextEncoder().encode(data) : data);
  }

  /** The program ends with `exitCode`. */
  exit(exitCode: number, signal: number | null = null): void {
    if (this.ended) return;
    this.ended = true;
    this.end({ exitCode, signal });
  }

  onData(listener: (chunk: Uint8Array) => void): void {
    this.listener = listener;
  }
  onExit(listener: (exit: PtyExit) => void): void {
    void this.exited.then(listener);
  }
  write(data: Uint8Array | string): void {
    this.writes.push(typeof data === "string" ? data : new TextDecoder().decode(data));
  }
  drained(): Promise<void> {
    return Promise.resolve();
  }
  resize(cols: number, rows: number): void {
    this.sizes.push([cols, rows]);
  }
  pause(): void {
    this.paused = true;
    this.pauses++;
  }
  resume(): void {
    this.paused = false;
    this.resumes++;
  }
  kill(): void {
    this.exit(129, 1);
  }
}

/** A SpawnPty that makes FakePtys; `last` is the current run's. */
export function fakePtys(): { spawn: SpawnPty; readonly last: FakePty; all: FakePty[] } {
  const all: FakePty[] = [];
  return {
    spawn: (options) => {
      const pty = new FakePty(options);
      all.push(pty);
      return pty;
    },
    get last() {
      const pty = all.at(-1);
      if (!pty) throw new Error("no PTY spawned yet");
      return pty;
    },
    all,
  };
}
