/**
 * Issue 3's and issue 9 #1's throughput figure: `cat` of the corpus through the server (its own
 * process) to one WebSocket client, as a ratio to reading the same PTY directly in this process
 * with node-pty. Both arms run the same program, which prints one marker byte, waits for a line
 * and then execs `cat`: the client attaches first, so the timed bytes arrive live, not as a replay,
 * and each arm is timed from the keystroke that starts `cat` to the exit (exit frame on the
 * WebSocket, node-pty's exit event directly). The arms alternate; the figure is their medians.
 */
import { performance } from "node:perf_hooks";
import { ensureCorpus, FULL_CORPUS_BYTES, QUICK_CORPUS_BYTES, type Corpus } from "./corpus.ts";
import { BENCH_COLS, BENCH_ROWS, spawnDirect } from "./direct-pty.ts";
import { hubModuleMissing, hubUnavailable } from "./hub-probe.ts";
import { figure, type BenchContext, type BenchResult } from "./report.ts";
import { startServerProcess, type ServerProcess } from "./server-process.ts";
import { median, megabytesPerSecond, MIB, round } from "./stats.ts";
import { TerminalClient } from "./terminal-client.ts";

const RUNS = 3;
/** Program: no echo (the keystroke must not add bytes), a marker byte, then cat once a line comes. */
const SCRIPT = `stty -echo; printf R; read line; exec cat "$0"`;
const MARKER_BYTES = 1;
/** A slow run on a loaded machine still ends well within this. */
const RUN_TIMEOUT_MS = 180_000;
const MARKER_TIMEOUT_MS = 15_000;

/** `ms`: keystroke → exit (the figure); `lastByteMs`: keystroke → last output byte, to tell delivery from exit reporting. */
type Run = { bytes: number; ms: number; mbps: number; lastByteMs: number };

async function direct(corpus: Corpus): Promise<Run> {
  const pty = spawnDirect(["sh", "-c", SCRIPT, corpus.path]);
  await pty.waitForText("R", MARKER_TIMEOUT_MS);
  const start = performance.now();
  let last = start;
  pty.onChunk(() => (last = performance.now()));
  pty.pty.write("\r");
  await pty.exited;
  const ms = performance.now() - start;
  const bytes = pty.bytes - MARKER_BYTES;
  return { bytes, ms, mbps: megabytesPerSecond(bytes, ms), lastByteMs: last - start };
}

async function throughServer(server: ServerProcess, corpus: Corpus): Promise<Run> {
  const info = await server.createSession({ command: ["sh", "-c", SCRIPT, corpus.path], cols: BENCH_COLS, rows: BENCH_ROWS });
  try {
    const client = await TerminalClient.connect({ url: server.url, token: server.token, sessionId: info.id, client: "bench-throughput" });
    await client.until(() => client.offset >= MARKER_BYTES, MARKER_TIMEOUT_MS, "marker byte");
    const before = client.offset;
    const start = performance.now();
    client.send("\r");
    await client.until(() => client.exitCode !== null, RUN_TIMEOUT_MS, "exit frame");
    const ms = client.exitAt - start;
    const bytes = client.offset - before;
    await client.close();
    return { bytes, ms, mbps: megabytesPerSecond(bytes, ms), lastByteMs: client.lastOutputAt - start };
  } finally {
    await server.deleteSession(info.id);
  }
}

function runDetail(runs: readonly Run[]) {
  return {
    runsMBps: runs.map((r) => round(r.mbps, 1)),
    bytes: runs.map((r) => r.bytes),
    exitAfterLastByteMs: runs.map((r) => Math.round(r.ms - r.lastByteMs)),
    medianMBpsToLastByte: round(median(runs.map((r) => megabytesPerSecond(r.bytes, r.lastByteMs))), 1),
  };
}

export async function benchWsThroughput(ctx: BenchContext): Promise<BenchResult> {
  const missing = hubModuleMissing();
  if (missing) return { skipped: missing };
  const corpus = await ensureCorpus(ctx.quick ? QUICK_CORPUS_BYTES : FULL_CORPUS_BYTES);
  const server = await startServerProcess();
  try {
    const unavailable = await hubUnavailable(server);
    if (unavailable) return { skipped: unavailable };
    const directRuns: Run[] = [];
    const serverRuns: Run[] = [];
    for (let i = 0; i < RUNS; i++) {
      directRuns.push(await direct(corpus));
      serverRuns.push(await throughServer(server, corpus));
      ctx.log(`ws-throughput ${i + 1}/${RUNS}: direct ${directRuns[i]!.mbps.toFixed(1)} MB/s, WebSocket ${serverRuns[i]!.mbps.toFixed(1)} MB/s`);
    }
    const complete = serverRuns.every((r) => r.bytes === corpus.ptyBytes);
    return [
      figure({
        id: "ws.throughput",
        label: `cat ${corpus.bytes / MIB} MiB via server to 1 WebSocket vs PTY in-process`,
        unit: "MB/s",
        value: median(serverRuns.map((r) => r.mbps)),
        baseline: median(directRuns.map((r) => r.mbps)),
        baselineLabel: "PTY direct",
        goal: { on: "ratio", op: ">=", target: 0.9, source: "issues 3 and 9 (ttyd: 0.70)" },
        // Every byte must reach the client; node-pty alone may lose a tail at exit.
        valid: complete,
        detail: {
          corpusBytes: corpus.bytes,
          expectedPtyBytes: corpus.ptyBytes,
          webSocket: { ...runDetail(serverRuns), complete },
          direct: runDetail(directRuns),
        },
      }),
    ];
  } finally {
    await server.stop();
  }
}
