/**
 * A webmux server in its own process (started by server-process.ts with `--expose-gc`), so the
 * benchmarks measure it the way users run it: its own event loop and heap, clients elsewhere.
 * IPC: it sends `{type:"ready", url, token}`; it answers `{type:"memory"}` with its memory after
 * a full GC (its own RSS: PTY children are separate processes) and `{type:"stop"}` by closing.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startWebmux } from "../server/server.ts";
import { DEFAULT_BUFFER_BYTES } from "../server/session/ring-buffer.ts";

export type ChildRequest = { type: "memory" } | { type: "stop" };
export type MemorySample = { rss: number; heapUsed: number; heapTotal: number; external: number; arrayBuffers: number };
export type ChildMessage =
  | { type: "ready"; url: string; token: string; hostPid: number | null }
  | { type: "memory"; memory: MemorySample }
  | { type: "stopped" };

/** A fixed bench-only token; the server listens on loopback only. */
const BENCH_TOKEN = "bench-token-0123456789abcdef";
/** Full collections before reading RSS: a second pass frees what the first one's finalizers released. */
const GC_PASSES = 2;

const send = (message: ChildMessage) => process.send?.(message);
const dataDir = mkdtempSync(join(tmpdir(), "webmux-bench-data-"));
const server = await startWebmux({
  host: "127.0.0.1",
  port: 0,
  token: BENCH_TOKEN,
  dataDir,
  shell: "/bin/bash",
  // bench/snapshot-size.ts: a ring smaller than the output (WEBMUX_BENCH_BUFFER_BYTES)
  bufferBytes: Number(process.env.WEBMUX_BENCH_BUFFER_BYTES) || DEFAULT_BUFFER_BYTES,
  openApi: null,
  // bench/session-host.ts: the same server with its sessions in a session host (WEBMUX_BENCH_SESSION_HOST=1)
  ...(process.env.WEBMUX_BENCH_SESSION_HOST === "1" ? { sessionHost: true, stopSessionsOnExit: true } : {}),
});

async function stop(): Promise<void> {
  await server.close();
  rmSync(dataDir, { recursive: true, force: true });
  send({ type: "stopped" });
  process.disconnect?.();
  process.exit(0);
}

process.on("message", (message: ChildRequest) => {
  if (message.type === "memory") {
    const gc = (globalThis as { gc?: () => void }).gc;
    for (let i = 0; i < GC_PASSES; i++) gc?.();
    const { rss, heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage();
    send({ type: "memory", memory: { rss, heapUsed, heapTotal, external, arrayBuffers } });
  } else if (message.type === "stop") {
    void stop();
  }
});
// The parent died without saying stop: do not outlive it with 100 shells.
process.on("disconnect", () => void stop());

send({ type: "ready", url: server.url, token: server.token, hostPid: server.hostLink?.hostPid ?? null });
