/**
 * Measures HeadlessScreen: the worker's parse throughput on `cat`-like output (source
 * text, LF turned into CRLF as a PTY's onlcr does) and the main thread's cost per MB of
 * write(). Not a test; run it by hand:
 *   node --import tsx bench/headless-screen-bench.ts [MB] [chunkKiB]
 *   node_modules/.bin/bun bench/headless-screen-bench.ts [MB] [chunkKiB]
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { HeadlessScreen, MAX_BACKLOG_BYTES } from "../server/session/headless-screen.ts";

/** Default amount of output to push through, in MB. */
const DEFAULT_MEGABYTES = 100;
/** Default PTY chunk size in KiB (node-pty typically delivers a few KiB per read). */
const DEFAULT_CHUNK_KIB = 16;
/** Wait while the worker is behind; a timer, not a spin, so the main thread's CPU time
 * measures write() and message handling rather than the pacing loop. */
const PACE_SLEEP_MS = 1;
/** Source text used as "typical cat output". */
const CORPUS_BYTES = 8 * 1024 * 1024;

function corpus(): Uint8Array {
  const root = fileURLToPath(new URL("../node_modules/typescript/lib/", import.meta.url));
  let text = "";
  for (const name of readdirSync(root).sort()) {
    if (!name.endsWith(".js") && !name.endsWith(".d.ts")) continue;
    const path = join(root, name);
    if (!statSync(path).isFile()) continue;
    text += readFileSync(path, "utf8");
    if (text.length >= CORPUS_BYTES) break;
  }
  return new TextEncoder().encode(text.slice(0, CORPUS_BYTES).replace(/\r?\n/g, "\r\n"));
}

/** CPU time (ms) of the main thread, from Linux's per-thread stat (main tid = pid). */
function mainThreadCpuMs(): number {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticksPerSecond = 100; // USER_HZ on Linux
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond;
}

async function main(): Promise<void> {
  const megabytes = Number(process.argv[2] ?? DEFAULT_MEGABYTES);
  const chunkBytes = Number(process.argv[3] ?? DEFAULT_CHUNK_KIB) * 1024;
  const total = megabytes * 1024 * 1024;
  const text = corpus();
  const screen = new HeadlessScreen({ cols: 120, rows: 40 });
  await screen.read(); // worker started and ready

  const cpu0 = mainThreadCpuMs();
  const start = performance.now();
  let inWrite = 0;
  let written = 0;
  let offset = 0;
  while (written < total) {
    // Pace like a PTY that the mirror never pauses, but stay under the drop bound so the
    // whole input is parsed: measure throughput, not dropping.
    while (screen.stats().postedBytes - screen.stats().parsedBytes > MAX_BACKLOG_BYTES / 2) {
      await new Promise((resolve) => setTimeout(resolve, PACE_SLEEP_MS));
    }
    if (offset + chunkBytes > text.byteLength) offset = 0;
    const chunk = text.subarray(offset, offset + chunkBytes);
    offset += chunkBytes;
    const t0 = performance.now();
    screen.write(chunk);
    inWrite += performance.now() - t0;
    written += chunk.byteLength;
  }
  await screen.read();
  const seconds = (performance.now() - start) / 1000;
  const mainCpuMs = mainThreadCpuMs() - cpu0;
  const mb = written / 1024 / 1024;
  const stats = screen.stats();
  screen.dispose();
  console.log(
    JSON.stringify({
      runtime: typeof (globalThis as { Bun?: unknown }).Bun === "undefined" ? `node ${process.version}` : "bun",
      megabytes: mb,
      chunkKiB: chunkBytes / 1024,
      workerParseMBps: +(mb / seconds).toFixed(1),
      mainWriteMsPerMB: +(inWrite / mb).toFixed(3),
      mainThreadCpuMsPerMB: +(mainCpuMs / mb).toFixed(2),
      droppedBytes: stats.droppedBytes,
    }),
  );
}

void main();
