/**
 * The `server` fixture: a real `webmux serve` per test, on a free port, with a fresh
 * data dir and a random token. It fails the test (with the server's stderr) if the
 * server died during it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { test as base, expect } from "@playwright/test";
import { expectNoSessionHostLeft } from "../server/testing/leftover-hosts.ts";
import { fetchTrusting } from "./https-fetch.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SERVER_BIN = join(ROOT, "bin/webmux.js");

/** Start-up is a module load and a listen; 15 s only bites when something is wrong. */
const STARTUP_TIMEOUT_MS = 15_000;
/** How long a SIGTERMed server may take to end its sessions before it gets SIGKILL. */
const SHUTDOWN_GRACE_MS = 5_000;
/** A server that cannot answer for its app shell within this much time is wedged. */
const LIVENESS_TIMEOUT_MS = 5_000;
/** Keep the end of stderr only: enough to explain a crash without flooding the report. */
const STDERR_KEEP_BYTES = 64 * 1024;

const LISTENING = /listening on (https?:\/\/\S+)/;

export type WebmuxServer = {
  /** e.g. `http://127.0.0.1:41234` (`https://…` with `--tls-cert`), no trailing slash. */
  url: string;
  /** The global token the server was started with. */
  token: string;
  /** fetch() against the server, authenticated with the global token as a Bearer. */
  api(path: string, init?: RequestInit): Promise<Response>;
  /**
   * Stops the server (SIGTERM, or SIGKILL with `crash`: no goodbyes) and starts it again on the
   * same port, data dir and token. Its sessions survive only with `sessionHost` (in the session
   * host); otherwise they live as long as the process.
   */
  restart(options?: { crash?: boolean; env?: Record<string, string> }): Promise<void>;
};

type Fixtures = {
  /** Extra `webmux serve` flags for a test file: `test.use({ serverArgs: [...] })`. */
  serverArgs: string[];
  /**
   * Run the sessions in the data dir's session host, so they outlive a restart (`webmux serve`'s
   * default); off, the server gets `--stop-sessions-on-exit`. The host is stopped after the test.
   */
  sessionHost: boolean;
  /** Extra environment of the first `webmux serve` (a restart takes its own `env`). */
  serverEnv: Record<string, string>;
  server: WebmuxServer;
};

type Running = { child: ChildProcess; stderr: () => string; exited: Promise<void> };

function startServer(args: string[], extraEnv: Record<string, string> = {}): Running {
  const child = spawn(process.execPath, [SERVER_BIN, "serve", ...args], {
    cwd: ROOT,
    // Plain stderr for reports; Playwright's FORCE_COLOR would override NO_COLOR (with a warning).
    env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: undefined, ...extraEnv },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr!.setEncoding("utf8");
  child.stderr!.on("data", (chunk: string) => {
    stderr = (stderr + chunk).slice(-STDERR_KEEP_BYTES);
  });
  // A failed spawn emits "error" (and no "exit" may follow): record it like a crash.
  child.once("error", (error) => {
    stderr += `\n[fixture] spawn failed: ${error.message}`;
  });
  const exited = new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.once("error", () => resolve());
  });
  return { child, stderr: () => stderr, exited };
}

function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

function describeExit(running: Running): string {
  const { exitCode, signalCode } = running.child;
  const how = signalCode !== null ? `signal ${signalCode}` : `exit code ${exitCode}`;
  return `webmux server ended (${how}). Its stderr:\n${running.stderr() || "(empty)"}`;
}

/** Resolves with the URL from the `listening on` line; rejects if the server dies or is slow. */
function waitForListening(running: Running): Promise<string> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: running.child.stdout! });
    const timer = setTimeout(() => {
      finish();
      reject(new Error(`webmux server printed no "listening on" line within ${STARTUP_TIMEOUT_MS} ms. Its stderr:\n${running.stderr()}`));
    }, STARTUP_TIMEOUT_MS);
    const onExit = () => {
      finish();
      reject(new Error(describeExit(running)));
    };
    const finish = () => {
      clearTimeout(timer);
      running.child.off("exit", onExit);
      // Keep draining stdout so a chatty server never blocks on a full pipe.
      lines.removeAllListeners("line");
    };
    lines.on("line", (line) => {
      const match = LISTENING.exec(line);
      if (match === null) return;
      finish();
      resolve(match[1]!.replace(/\/$/, ""));
    });
    running.child.once("exit", onExit);
  });
}

/**
 * Null when the server still answers HTTP, else why not. A dead child may not have been
 * reaped yet when a test ends, so asking over HTTP is what tells a crash from a live server.
 */
async function findProblem(running: Running, url: string, fetch: typeof globalThis.fetch): Promise<string | null> {
  if (!hasExited(running.child)) {
    try {
      const response = await fetch(url + "/", { signal: AbortSignal.timeout(LIVENESS_TIMEOUT_MS) });
      await response.arrayBuffer();
      return null;
    } catch {
      await withDeadline(running.exited, SHUTDOWN_GRACE_MS);
    }
  }
  if (hasExited(running.child)) return `The server died during the test. ${describeExit(running)}`;
  return `The server stopped answering HTTP during the test. Its stderr:\n${running.stderr() || "(empty)"}`;
}

/** Waits for `promise` or `ms`, whichever comes first; says which. */
async function withDeadline(promise: Promise<unknown>, ms: number): Promise<"done" | "timeout"> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), ms);
  });
  try {
    return await Promise.race([promise.then(() => "done" as const), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** `webmux stop`: every session of the data dir ends, and its host. */
async function stopSessionHost(dataDir: string): Promise<void> {
  const child = spawn(process.execPath, [SERVER_BIN, "stop", "--data-dir", dataDir], { cwd: ROOT, stdio: "ignore" });
  await new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.once("error", () => resolve());
  });
}

async function stopServer(running: Running): Promise<void> {
  if (hasExited(running.child)) return;
  running.child.kill("SIGTERM");
  if ((await withDeadline(running.exited, SHUTDOWN_GRACE_MS)) === "timeout") {
    running.child.kill("SIGKILL");
    await running.exited;
  }
}

export const test = base.extend<Fixtures>({
  serverArgs: [[], { option: true }],
  sessionHost: [false, { option: true }],
  serverEnv: [{}, { option: true }],

  server: async ({ serverArgs, sessionHost, serverEnv }, use, testInfo) => {
    const dataDir = await mkdtemp(join(tmpdir(), "webmux-e2e-"));
    const token = randomBytes(16).toString("hex");
    // A server with its own certificate (`--tls-cert`) is asked over HTTPS trusting exactly that one.
    const certFile = serverArgs[serverArgs.indexOf("--tls-cert") + 1];
    const fetch = serverArgs.includes("--tls-cert") && certFile ? fetchTrusting(await readFile(certFile)) : globalThis.fetch;
    const serve = (port: string, env: Record<string, string>) => startServer([
      "--port", port,
      "--host", "127.0.0.1",
      "--data-dir", dataDir,
      "--token", token,
      ...(sessionHost ? [] : ["--stop-sessions-on-exit"]),
      ...serverArgs,
    ], env);
    let running = serve("0", serverEnv);
    /** stderr of the runs before a restart */
    let earlier = "";
    try {
      const url = await waitForListening(running);
      await use({
        url,
        token,
        api: (path, init = {}) => {
          const headers = new Headers(init.headers);
          if (!headers.has("Authorization")) headers.set("Authorization", `Bearer ${token}`);
          return fetch(url + path, { ...init, headers });
        },
        async restart({ crash = false, env = {} } = {}) {
          if (crash) running.child.kill("SIGKILL");
          await (crash ? running.exited : stopServer(running));
          earlier += running.stderr() + "\n[fixture] restarted\n";
          running = serve(new URL(url).port, env);
          const again = await waitForListening(running);
          if (again !== url) throw new Error(`the restarted server listens on ${again}, not ${url}`);
        },
      });
      const problem = await findProblem(running, url, fetch);
      if (problem !== null) throw new Error(problem);
    } finally {
      await stopServer(running);
      if (sessionHost) await stopSessionHost(dataDir);
      // Fails the test when a host of its data dir is left (leftover-hosts.ts), and ends that host.
      await expectNoSessionHostLeft({ dataDirs: [dataDir] });
      if (testInfo.status !== testInfo.expectedStatus) {
        await testInfo.attach("server-stderr", { body: earlier + running.stderr(), contentType: "text/plain" });
      }
      await rm(dataDir, { recursive: true, force: true });
    }
  },
});

export { expect };
