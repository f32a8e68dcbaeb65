/**
 * The `webmux` command as a test runs it: a real process from the checkout, its output kept, its
 * exit awaited. Tests that start servers this way call `stopWebmuxProcesses` after each test.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { waitFor } from "./wait.ts";

export const REPO_ROOT = join(import.meta.dirname, "..", "..");
/** `node bin/webmux.js`; pass another runtime (e.g. Bun with server/main.ts) to run it there. */
export const NODE_WEBMUX = [process.execPath, "bin/webmux.js"];
/** Start-up includes loading TypeScript through tsx on a busy machine. */
const LISTENING_TIMEOUT_MS = 20_000;

export type WebmuxRun = { proc: ChildProcess; out: () => string; err: () => string; exit: Promise<number | null> };

const running: ChildProcess[] = [];

export function runWebmux(args: string[], options: { runtime?: string[]; env?: Record<string, string> } = {}): WebmuxRun {
  const [file, ...prefix] = options.runtime ?? NODE_WEBMUX;
  const proc = spawn(file!, [...prefix, ...args], { cwd: REPO_ROOT, env: { ...process.env, ...options.env }, stdio: ["ignore", "pipe", "pipe"] });
  running.push(proc);
  let out = "";
  let err = "";
  proc.stdout!.on("data", (d) => (out += d));
  proc.stderr!.on("data", (d) => (err += d));
  const exit = new Promise<number | null>((resolve) => proc.once("exit", (code) => resolve(code)));
  return { proc, out: () => out, err: () => err, exit };
}

/** The URL of the `listening on …` line, once it is there. */
export function listeningUrl(run: WebmuxRun, pattern = /^listening on (https?:\/\/\S+)$/m): Promise<string> {
  return waitFor(() => pattern.exec(run.out())?.[1], { timeout: LISTENING_TIMEOUT_MS, message: `listening line (stderr: ${run.err()})` });
}

/** SIGKILL whatever a test left running. */
export function stopWebmuxProcesses(): void {
  for (const proc of running.splice(0)) proc.kill("SIGKILL");
}
