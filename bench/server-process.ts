/** The benchmark side of server-child.ts: start it, talk to its HTTP API and IPC, stop it. */
import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { SessionInfo } from "../server/contract/types.ts";
import { serverApi } from "../server/testing/webmux-process.ts";
import type { ChildMessage, ChildRequest, MemorySample } from "./server-child.ts";

export type { MemorySample } from "./server-child.ts";

/** Start-up includes loading TypeScript through tsx; generous on a busy 2-core machine. */
const READY_TIMEOUT_MS = 30_000;
/** closeAll ends every session with SIGHUP (SIGKILL after 3 s): wait past that. */
const STOP_TIMEOUT_MS = 10_000;
const MEMORY_TIMEOUT_MS = 10_000;

const RUN_TS = fileURLToPath(new URL("../bin/run-ts.js", import.meta.url));
const CHILD = fileURLToPath(new URL("./server-child.ts", import.meta.url));

export type SessionBuffer = { generation: string; start: number; end: number; truncated: boolean; bytes: Uint8Array };

export type ServerProcess = {
  url: string;
  token: string;
  pid: number;
  /** the session host's pid, when the server runs its sessions in one (`sessionHost`) */
  hostPid: number | null;
  /** fetch with the global token */
  api(path: string, init?: RequestInit & { json?: unknown }): Promise<Response>;
  createSession(body: { command: string[]; cols?: number; rows?: number; cwd?: string; env?: Record<string, string> }): Promise<SessionInfo>;
  deleteSession(id: string): Promise<void>;
  /** the ring's position from GET /buffer's headers (body dropped unless asked for) */
  buffer(id: string, withBytes?: boolean): Promise<SessionBuffer>;
  /** the server process's own memory after a full GC */
  memory(): Promise<MemorySample>;
  stop(): Promise<void>;
};

function nextMessage<T extends ChildMessage["type"]>(child: ChildProcess, type: T, timeoutMs: number): Promise<Extract<ChildMessage, { type: T }>> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => done(new Error(`bench server: no ${type} message within ${timeoutMs} ms`)), timeoutMs);
    const onMessage = (message: ChildMessage) => {
      if (message.type === type) done(null, message as Extract<ChildMessage, { type: T }>);
    };
    const onExit = (code: number | null) => done(new Error(`bench server exited (${code}) before ${type}`));
    function done(err: Error | null, message?: Extract<ChildMessage, { type: T }>) {
      clearTimeout(timer);
      child.off("message", onMessage);
      child.off("exit", onExit);
      if (err) reject(err);
      else resolve(message!);
    }
    child.on("message", onMessage);
    child.once("exit", onExit);
  });
}

export type ServerProcessOptions = {
  /** write a V8 CPU profile of the server (every thread) into this directory when it stops */
  cpuProfileDir?: string | null;
  /** run the sessions in a session host (bench/session-host.ts) */
  sessionHost?: boolean;
  /**
   * How a session host's terminal streams travel (docs/design.md, The session host serves the
   * streams): "relay" through the server (`WEBMUX_HOST_STREAMS=relay`); unset, the server's
   * default (the variable is removed even when the runner's own environment sets it).
   */
  hostStreams?: "relay";
  /** each session's ring (default: the server's default, DEFAULT_BUFFER_BYTES) */
  bufferBytes?: number;
};

/** Sampling interval of a server's CPU profile (µs): a keystroke's path is tens of µs of JavaScript, unseen at V8's default of 1 000. */
const CPU_PROFILE_INTERVAL_US = 50;

export async function startServerProcess(options: ServerProcessOptions = {}): Promise<ServerProcess> {
  const execArgv = ["--expose-gc"];
  if (options.cpuProfileDir) execArgv.push("--cpu-prof", `--cpu-prof-dir=${options.cpuProfileDir}`, `--cpu-prof-interval=${CPU_PROFILE_INTERVAL_US}`);
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (options.sessionHost) env.WEBMUX_BENCH_SESSION_HOST = "1";
  if (options.hostStreams) env.WEBMUX_HOST_STREAMS = options.hostStreams;
  else delete env.WEBMUX_HOST_STREAMS;
  if (options.bufferBytes !== undefined) env.WEBMUX_BENCH_BUFFER_BYTES = String(options.bufferBytes);
  const child = fork(RUN_TS, [CHILD], { execArgv, env, stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const ready = await nextMessage(child, "ready", READY_TIMEOUT_MS).catch((err) => {
    child.kill("SIGKILL");
    throw err;
  });
  const { url, token } = ready;
  const request = (message: ChildRequest) => child.send(message);

  const http = serverApi(token);
  const api: ServerProcess["api"] = (path, init = {}) => http.api(url, path, init);

  return {
    url,
    token,
    pid: child.pid!,
    hostPid: ready.hostPid ?? null,
    api,
    createSession: (body) => http.create(url, body),
    async deleteSession(id) {
      const res = await api(`/api/sessions/${id}`, { method: "DELETE" });
      await res.body?.cancel();
      if (res.status !== 204 && res.status !== 404) throw new Error(`delete session: ${res.status}`);
    },
    async buffer(id, withBytes = false) {
      const res = await api(`/api/sessions/${id}/buffer`);
      if (res.status !== 200) throw new Error(`buffer of ${id}: ${res.status} ${await res.text()}`);
      const header = (name: string) => res.headers.get(name) ?? "";
      const bytes = withBytes ? new Uint8Array(await res.arrayBuffer()) : new Uint8Array(0);
      if (!withBytes) await res.body?.cancel();
      return {
        generation: header("x-webmux-generation"),
        start: Number(header("x-webmux-start")),
        end: Number(header("x-webmux-end")),
        truncated: header("x-webmux-truncated") === "true",
        bytes,
      };
    },
    async memory() {
      const reply = nextMessage(child, "memory", MEMORY_TIMEOUT_MS);
      request({ type: "memory" });
      return (await reply).memory;
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      request({ type: "stop" });
      const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    },
  };
}
