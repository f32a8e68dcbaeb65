/**
 * Spawn-or-adopt (docs/design.md, What survives a restart): a server connects to the host of its
 * data dir, and starts one when none answers. The host is detached (its own session and process
 * group), so Ctrl-C in the server's terminal, a hang-up of its login shell or a service manager
 * stopping the server's process leave it running; its output goes to `host/host.log`.
 */
import { spawn } from "node:child_process";
import { closeSync, openSync, renameSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { WEBMUX_BUILD } from "./build.ts";
import { HostConnection, HostRefusedError, HostUnavailableError, requestHandover, type ConnectOptions, type HandedOver } from "./host-client.ts";
import { prepareHostDir, type HostPaths } from "./host-dir.ts";
import { Refusal, type SuccessorCommand } from "./protocol.ts";

/** A host starts (loads its TypeScript, listens) well within this, even on a loaded 2-core machine. */
export const HOST_START_TIMEOUT_MS = 30_000;
/** How often a starting host's socket is tried. */
const START_POLL_MS = 25;
/** A server that just stopped may still hold its host connection for a moment: its successor retries this long. */
export const BUSY_RETRY_MS = 10_000;
/** A handover takes the successor's start and the rings' journey over the pipe; a host that takes longer has failed. */
export const HANDOVER_TIMEOUT_MS = HOST_START_TIMEOUT_MS + 30_000;
/** The host log is rotated (one old copy kept) when a host starts and it is larger than this. */
export const HOST_LOG_MAX_BYTES = 1024 * 1024;

const REPO_ROOT = join(fileURLToPath(new URL(".", import.meta.url)), "..", "..");
const NODE_ENTRY = join(REPO_ROOT, "bin", "webmux.js");
const BUN_ENTRY = join(REPO_ROOT, "server", "main.ts");

/** The host could not be started; the message says why (the end of its log). */
export class HostStartError extends Error {}

/** argv that runs the `webmux` command under `runtime` (a node or bun executable; default: this process's). */
export function webmuxArgv(runtime: string = process.execPath): string[] {
  const isBun = runtime === process.execPath ? Boolean(process.versions.bun) : basename(runtime).startsWith("bun");
  return [runtime, isBun ? BUN_ENTRY : NODE_ENTRY];
}

export type StartHostOptions = {
  /** the runtime the host runs on (default: this process's) */
  runtime?: string;
  /** the host's environment (default: this process's) */
  env?: NodeJS.ProcessEnv;
};

/** Start a host for the data dir, detached; resolves once it (or a host that won a race) answers. */
export async function startHost(dataDir: string, connect: ConnectOptions, options: StartHostOptions = {}): Promise<HostConnection> {
  const paths = prepareHostDir(dataDir);
  let exitCode = spawnDetachedHost(paths, dataDir, options);
  const deadline = Date.now() + HOST_START_TIMEOUT_MS;
  for (;;) {
    try {
      return await HostConnection.connect(paths, connect);
    } catch (err) {
      // A host that is ending (`webmux stop` under way) still takes connections until it is gone.
      const ending = err instanceof HostRefusedError && err.reason === Refusal.ENDING;
      if (!(err instanceof HostUnavailableError) && !ending) throw err;
      // Ours left because another host held the socket (exit 0), and that one has gone since
      // (it was ending): nobody holds the sessions now, so a host is started again.
      if (!ending && exitCode() === 0) exitCode = spawnDetachedHost(paths, dataDir, options);
    }
    // A host that lost a start race exits 0 and the winner answers soon; any other exit is a failure.
    const code = exitCode();
    if (code !== undefined && code !== 0) throw new HostStartError(`the session host did not start (see ${paths.log})`);
    if (Date.now() > deadline) throw new HostStartError(`the session host did not answer within ${HOST_START_TIMEOUT_MS / 1000} s (see ${paths.log})`);
    await new Promise((r) => setTimeout(r, START_POLL_MS));
  }
}

/** Spawn `webmux host` detached, its output appended to the host log; returns how it has exited so far (undefined: running). */
function spawnDetachedHost(paths: HostPaths, dataDir: string, options: StartHostOptions): () => number | null | undefined {
  rotateLog(paths);
  const log = openSync(paths.log, "a", 0o600);
  const [file, ...args] = webmuxArgv(options.runtime);
  let exitCode: number | null | undefined;
  try {
    const child = spawn(file!, [...args, "host", "--data-dir", dataDir], {
      cwd: REPO_ROOT,
      env: options.env ?? process.env,
      detached: true,
      stdio: ["ignore", log, log],
    });
    child.once("exit", (code, signal) => (exitCode = code ?? (signal ? -1 : null)));
    child.once("error", () => (exitCode = -1));
    child.unref();
  } finally {
    closeSync(log);
  }
  return () => exitCode;
}

/**
 * The data dir's host: the one that runs, else a new one. A host busy with another server is
 * retried for BUSY_RETRY_MS (a restart's predecessor may still be closing); other refusals throw.
 */
export async function connectHost(dataDir: string, connect: ConnectOptions, options: StartHostOptions & { start?: boolean } = {}): Promise<HostConnection> {
  const paths = prepareHostDir(dataDir);
  const busyUntil = Date.now() + BUSY_RETRY_MS;
  for (;;) {
    try {
      return await HostConnection.connect(paths, connect);
    } catch (err) {
      if (err instanceof HostUnavailableError) {
        if (options.start === false) throw err;
        return await startHost(dataDir, connect, options);
      }
      const retry = err instanceof HostRefusedError && (err.reason === Refusal.BUSY || err.reason === Refusal.ENDING) && Date.now() < busyUntil;
      if (!retry) throw err;
      await new Promise((r) => setTimeout(r, START_POLL_MS * 4));
    }
  }
}

function rotateLog(paths: HostPaths): void {
  try {
    if (statSync(paths.log).size > HOST_LOG_MAX_BYTES) renameSync(paths.log, `${paths.log}.1`);
  } catch {
    // no log yet
  }
}

/** How a host of another build starts this build's host as its successor. */
export function successorCommand(dataDir: string, options: StartHostOptions = {}): SuccessorCommand {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(options.env ?? process.env)) if (v !== undefined) env[k] = v;
  return { argv: [...webmuxArgv(options.runtime), "host", "--data-dir", dataDir, "--successor"], cwd: REPO_ROOT, env };
}

/**
 * Ask the data dir's host (another build) to hand its sessions over to a host of this build
 * (docs/design.md, What survives a restart). Throws HostRefusedError or HostGoneError with the reason it cannot.
 */
export function handOverHost(dataDir: string, options: StartHostOptions = {}): Promise<HandedOver> {
  return requestHandover(prepareHostDir(dataDir), successorCommand(dataDir, options), { build: WEBMUX_BUILD, timeoutMs: HANDOVER_TIMEOUT_MS });
}
