import { spawn, type ChildProcess } from "node:child_process";

/** A stdout line longer than this is dropped: no agent event is that large, and it bounds memory. */
export const MAX_AGENT_LINE_BYTES = 64 * 1024 * 1024;
/** How much of stderr is kept to explain a failed start. */
export const STDERR_TAIL_CHARS = 4096;
/** After stdin closes, the agent gets this long to finish and exit by itself. */
export const STDIN_CLOSE_GRACE_MS = 1_000;
/** After SIGTERM, this long before SIGKILL (docs/design.md, Hybrid sessions: TERM, then KILL). */
export const TERM_GRACE_MS = 3_000;

export type AgentExit = { code: number | null; signal: NodeJS.Signals | null; error?: string };

/**
 * One headless agent process: stdin for input, stdout split into lines, a tail of stderr. It leads
 * its own process group, so stopping it also stops the tools it started.
 */
export class AgentProcess {
  readonly exited: Promise<AgentExit>;
  private readonly child: ChildProcess;
  private stderrTail = "";
  private done = false;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private overlong = false;

  constructor(command: readonly string[], options: { cwd: string; env: Readonly<Record<string, string>> }, onLine: (line: string) => void) {
    this.child = spawn(command[0]!, command.slice(1), {
      cwd: options.cwd,
      env: { ...options.env },
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
    });
    let resolveExit!: (exit: AgentExit) => void;
    this.exited = new Promise((resolve) => (resolveExit = resolve));
    const finish = (exit: AgentExit) => {
      if (this.done) return;
      this.done = true;
      resolveExit(exit);
    };
    this.child.once("error", (err: NodeJS.ErrnoException) => finish({ code: null, signal: null, error: `cannot start ${command[0]}: ${err.code ?? err.message}` }));
    // "close" comes after stdout ended, so every line was delivered before the exit is reported.
    this.child.once("close", (code, signal) => finish({ code, signal }));
    this.child.stdin!.on("error", () => {}); // EPIPE once it exited: reported through `exited`
    this.child.stdout!.on("data", (chunk: Buffer) => this.split(chunk, onLine));
    this.child.stderr!.setEncoding("utf8");
    this.child.stderr!.on("data", (text: string) => {
      this.stderrTail = (this.stderrTail + text).slice(-STDERR_TAIL_CHARS);
    });
  }

  get pid(): number | null {
    return this.done ? null : (this.child.pid ?? null);
  }

  get running(): boolean {
    return !this.done;
  }

  /** The last bytes the agent wrote to stderr, trimmed. */
  get stderr(): string {
    return this.stderrTail.trim();
  }

  /** Resolves true once the bytes were handed to the pipe, false when the process went away first. */
  write(text: string): Promise<boolean> {
    const stdin = this.child.stdin;
    if (this.done || !stdin || !stdin.writable) return Promise.resolve(false);
    return new Promise((resolve) => stdin.write(text, (err) => resolve(!err && !this.done)));
  }

  endInput(): void {
    this.child.stdin?.end();
  }

  /** Signal the whole process group; ignored once it is gone. */
  kill(signal: NodeJS.Signals): void {
    if (this.done || this.child.pid === undefined) return;
    try {
      process.kill(-this.child.pid, signal);
    } catch {
      try {
        this.child.kill(signal);
      } catch {
        // already gone
      }
    }
  }

  /** Close stdin, then SIGTERM, then SIGKILL, each after its grace; resolves once it is gone. */
  async stop(stdinGraceMs = STDIN_CLOSE_GRACE_MS, termGraceMs = TERM_GRACE_MS): Promise<AgentExit> {
    this.endInput();
    if (await within(this.exited, stdinGraceMs)) return this.exited;
    this.kill("SIGTERM");
    if (await within(this.exited, termGraceMs)) return this.exited;
    this.kill("SIGKILL");
    return this.exited;
  }

  private split(chunk: Buffer, onLine: (line: string) => void): void {
    let start = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, nl);
      start = nl + 1;
      if (!this.overlong) {
        const line = this.pendingBytes === 0 ? piece.toString("utf8") : Buffer.concat([...this.pending, piece]).toString("utf8");
        if (line.trim() !== "") onLine(line);
      }
      this.pending = [];
      this.pendingBytes = 0;
      this.overlong = false;
    }
    if (start < chunk.length && !this.overlong) {
      const rest = chunk.subarray(start);
      this.pendingBytes += rest.length;
      if (this.pendingBytes > MAX_AGENT_LINE_BYTES) {
        this.overlong = true;
        this.pending = [];
      } else this.pending.push(Buffer.from(rest));
    }
  }
}

/** Whether `promise` settles within `ms`. */
export async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([promise.then(() => true as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
