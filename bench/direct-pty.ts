/**
 * The baselines' side: node-pty used directly, the way any program hosting a terminal would,
 * with nothing of webmux in between (bytes, `encoding: null`, one listener that only counts).
 */
import { tmpdir } from "node:os";
import { spawn, type IPty } from "node-pty";

/** The grid of every benchmarked terminal, the same on both sides of a comparison. */
export const BENCH_COLS = 120;
export const BENCH_ROWS = 40;
/** Output kept as text for waitForText: start-up markers come first, the bulk after needs no copy. */
const EARLY_OUTPUT_BYTES = 64 * 1024;

export type DirectPty = {
  readonly pty: IPty;
  /** bytes read so far */
  readonly bytes: number;
  /** every chunk, after it was counted */
  onChunk(listener: (chunk: Buffer) => void): void;
  /** resolves when node-pty reports the exit */
  readonly exited: Promise<{ exitCode: number }>;
  /** resolves once the output contains `text` within its first EARLY_OUTPUT_BYTES (a start-up marker) */
  waitForText(text: string, timeoutMs: number): Promise<void>;
  kill(): void;
};

export function spawnDirect(command: string[]): DirectPty {
  const [file, ...args] = command as [string, ...string[]];
  const pty = spawn(file, args, {
    name: "xterm-256color",
    cols: BENCH_COLS,
    rows: BENCH_ROWS,
    cwd: tmpdir(),
    env: { ...process.env, TERM: "xterm-256color" } as Record<string, string>,
    encoding: null,
  });
  let bytes = 0;
  let early = "";
  const earlyWaiters = new Set<() => void>();
  const listeners: Array<(chunk: Buffer) => void> = [];
  const exited = new Promise<{ exitCode: number }>((resolve) => pty.onExit(({ exitCode }) => resolve({ exitCode })));
  // With `encoding: null` node-pty emits Buffers; its typings still say string.
  pty.onData((data) => {
    const chunk = data as unknown as Buffer;
    const before = bytes;
    bytes += chunk.length;
    if (before < EARLY_OUTPUT_BYTES) {
      early += chunk.toString("latin1", 0, Math.min(chunk.length, EARLY_OUTPUT_BYTES - before));
      for (const check of [...earlyWaiters]) check();
    }
    for (const listener of listeners) listener(chunk);
  });
  return {
    pty,
    get bytes() {
      return bytes;
    },
    onChunk: (listener) => void listeners.push(listener),
    exited,
    waitForText(text, timeoutMs) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => finish(new Error(`direct PTY: no ${JSON.stringify(text)} within ${timeoutMs} ms (saw ${JSON.stringify(early.slice(-200))})`)),
          timeoutMs,
        );
        const check = () => {
          if (early.includes(text)) finish(null);
          else if (bytes >= EARLY_OUTPUT_BYTES) finish(new Error(`direct PTY: ${JSON.stringify(text)} not in the first ${EARLY_OUTPUT_BYTES} bytes`));
        };
        const finish = (err: Error | null) => {
          clearTimeout(timer);
          earlyWaiters.delete(check);
          if (err) reject(err);
          else resolve();
        };
        earlyWaiters.add(check);
        void exited.then(() => finish(new Error(`direct PTY exited before printing ${JSON.stringify(text)}`)));
        check();
      });
    },
    kill() {
      try {
        pty.kill("SIGKILL");
      } catch {
        // already gone
      }
    },
  };
}
