/**
 * The `webmux` command as a test runs it: a real process from the checkout, its output kept, its
 * exit awaited. The one launcher of server processes for tests (stress, fault, CLI, host and TLS
 * tests alike); tests that start them with `runWebmux` call `stopWebmuxProcesses` after each test.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import type { CreateSessionRequest, SessionInfo } from "../contract/types.ts";
import { join } from "node:path";
import { TEST_RUN_VARIABLE, testRunMarker } from "./leftover-hosts.ts";
import { waitFor } from "./wait.ts";

export const REPO_ROOT = join(import.meta.dirname, "..", "..");
/** `node bin/webmux.js`; pass another runtime (e.g. Bun with server/main.ts) to run it there. */
export const NODE_WEBMUX = [process.execPath, "bin/webmux.js"];
/** Bun, a devDependency: `bun server/main.ts` runs the sources natively. */
export const BUN_BINARY = join(REPO_ROOT, "node_modules", ".bin", "bun");
export const BUN_WEBMUX = [BUN_BINARY, "server/main.ts"];
/** Start-up includes loading TypeScript through tsx on a busy machine. */
const LISTENING_TIMEOUT_MS = 20_000;

export type WebmuxRun = { proc: ChildProcess; out: () => string; err: () => string; exit: Promise<number | null> };

export type WebmuxRunOptions = {
  runtime?: string[];
  /** added to the test's own environment */
  env?: Record<string, string>;
  /** leave out every WEBMUX_* variable of the test's own environment, so only the flags configure it */
  isolated?: boolean;
};

const running: ChildProcess[] = [];

export function runWebmux(args: string[], options: WebmuxRunOptions = {}): WebmuxRun {
  const [file, ...prefix] = options.runtime ?? NODE_WEBMUX;
  const base = options.isolated ? Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("WEBMUX_"))) : process.env;
  // The run's marker survives isolation: a session host this process starts is found by it (leftover-hosts.ts).
  const env = { ...base, [TEST_RUN_VARIABLE]: testRunMarker(), ...options.env };
  const proc = spawn(file!, [...prefix, ...args], { cwd: REPO_ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  running.push(proc);
  let out = "";
  let err = "";
  proc.stdout!.on("data", (d) => (out += d));
  proc.stderr!.on("data", (d) => (err += d));
  const exit = new Promise<number | null>((resolve) => proc.once("exit", (code) => resolve(code)));
  return { proc, out: () => out, err: () => err, exit };
}

/** The URL of the `listening on …` line, once it is there; fails at once when the process exits first. */
export function listeningUrl(run: WebmuxRun, pattern = /^listening on (https?:\/\/\S+)$/m, timeout = LISTENING_TIMEOUT_MS): Promise<string> {
  let exited = false;
  void run.exit.then(() => (exited = true));
  return waitFor(
    () => {
      const url = pattern.exec(run.out())?.[1];
      if (url === undefined && exited) throw new Error(`webmux exited before listening: ${run.err()}`);
      return url;
    },
    { timeout, message: `listening line (stderr: ${run.err()})` },
  );
}

/** SIGKILL whatever a test left running. */
export function stopWebmuxProcesses(): void {
  for (const proc of running.splice(0)) proc.kill("SIGKILL");
}

/**
 * After a test whose sessions outlive its servers: SIGKILL the servers, end each data dir's
 * session host and its programs (`webmux stop`, as each build in `builds` — the environment that
 * makes a process that build — whichever holds the dir now) and remove the dirs, which `dirs`
 * then no longer lists.
 */
export async function endDataDirs(dirs: string[], builds: Array<Record<string, string>> = [{}]): Promise<void> {
  stopWebmuxProcesses();
  for (const dir of dirs.splice(0)) {
    for (const env of builds) await runWebmux(["stop", "--data-dir", dir], { env }).exit;
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The HTTP API of the `webmux serve` processes a test runs with `token`, at whichever URL each listens on. */
export function serverApi(token: string) {
  const api = (url: string, path: string, init: RequestInit & { json?: unknown } = {}): Promise<Response> => {
    const headers = new Headers(init.headers);
    headers.set("authorization", `Bearer ${token}`);
    let body = init.body;
    if (init.json !== undefined) {
      body = JSON.stringify(init.json);
      headers.set("content-type", "application/json");
    }
    return fetch(url + path, { ...init, headers, body });
  };
  return {
    api,
    /** POST /api/sessions; fails the test unless it answers 201. */
    async create(url: string, request: CreateSessionRequest): Promise<SessionInfo> {
      const res = await api(url, "/api/sessions", { method: "POST", json: request });
      if (res.status !== 201) throw new Error(`POST /api/sessions answered ${res.status}: ${await res.text()}`);
      return (await res.json()) as SessionInfo;
    },
    async sessions(url: string): Promise<SessionInfo[]> {
      return ((await (await api(url, "/api/sessions")).json()) as { sessions: SessionInfo[] }).sessions;
    },
  };
}

export type ServerProcess = {
  proc: ChildProcess;
  url: string;
  token: string;
  stdout(): string;
  stderr(): string;
  /** the exit code (null when ended by a signal) */
  exit: Promise<number | null>;
  /** SIGTERM, then wait for the exit */
  stop(): Promise<number | null>;
};

/** The global token stress tests give their server processes. */
export const LOAD_TEST_TOKEN = "load-test-token-0123456789";

/**
 * `webmux serve --port 0 …` (under Node, or `bun server/main.ts serve …`) in its own process, so
 * it has a core (and an RSS) of its own, configured by its flags only, its sessions in that process
 * (`--stop-sessions-on-exit`: no session host outlives it). With `token: null` the server
 * generates (or reuses) the one kept in the data dir. Stopped by `stop()` (or `stopWebmuxProcesses`).
 */
export async function startServerProcess(
  dataDir: string,
  args: string[] = [],
  token: string | null = LOAD_TEST_TOKEN,
  runtime: "node" | "bun" = "node",
): Promise<ServerProcess> {
  const tokenArgs = token === null ? [] : ["--token", token];
  // Sessions in this process, as these load and fault tests measure them; they end with it.
  const run = runWebmux(["serve", "--stop-sessions-on-exit", "--port", "0", "--data-dir", dataDir, ...tokenArgs, ...args], {
    runtime: runtime === "bun" ? BUN_WEBMUX : NODE_WEBMUX,
    isolated: true,
  });
  const { proc, exit } = run;
  let exited = false;
  void exit.then(() => (exited = true));
  const url = await listeningUrl(run, /^listening on (http:\/\/[^\s]+)$/m).catch((e: Error) => {
    proc.kill("SIGKILL");
    throw new Error(`${e.message}; stderr: ${run.err()}`);
  });
  return {
    proc,
    url,
    token: token ?? (JSON.parse(readFileSync(join(dataDir, "global-token.json"), "utf8")) as { token: string }).token,
    stdout: run.out,
    stderr: run.err,
    exit,
    async stop() {
      if (!exited) proc.kill("SIGTERM");
      return exit;
    },
  };
}
