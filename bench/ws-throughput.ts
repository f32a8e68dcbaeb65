/**
 * The WebSocket throughput figure (docs/design.md § Performance):
 * `cat` of the corpus through the server (its own
 * process) to one WebSocket client, as a ratio to reading the same PTY directly in this process
 * with node-pty. Both arms run the same program and stop the clock on the same event, the last
 * byte of an end marker (see cat-stream.ts); the exit delay is reported beside it. The WebSocket
 * client is a FrameCounter (frame-counter.ts), a minimal reader that only counts, so the figure is
 * the server's cost rather than a client library's. The arms alternate; value and baseline are their
 * medians, the ratio the median of the paired rounds (stats.ts pairedRatio).
 */
import { catDirect, catThroughServer, keepServerWarm, type CatRun } from "./cat-stream.ts";
import { ensureCorpus, FULL_CORPUS_BYTES, QUICK_CORPUS_BYTES } from "./corpus.ts";
import { hubModuleMissing, hubUnavailable } from "./hub-probe.ts";
import { figure, type BenchContext, type BenchResult } from "./report.ts";
import { startServerProcess } from "./server-process.ts";
import { median, MIB, pairedRatio, round } from "./stats.ts";

/** Runs per arm: an odd count, so the median is one real run; five, because one run of a loaded machine can be off by 2×. */
const RUNS = 5;
/** `--quick`: still an odd count. */
const QUICK_RUNS = 3;

/** What a reader of the JSON needs to trust one arm: every run, the frame sizes, the exit delay, the reader's CPU. */
export function catRunDetail(runs: readonly CatRun[]) {
  const first = (r: CatRun) => r.readers[0]!;
  return {
    reader: runs[0]?.reader ?? null,
    runsMBps: runs.map((r) => round(r.mbps, 1)),
    runsMs: runs.map((r) => Math.round(r.ms)),
    complete: runs.every((r) => r.complete),
    bytes: runs.map((r) => first(r).bytes),
    /** 0x00 frames (WebSocket) or node-pty chunks (direct) per run, and their mean size */
    frames: runs.map((r) => first(r).frames),
    meanFrameKiB: runs.map((r) => round(first(r).bytes / Math.max(1, first(r).frames) / 1024, 1)),
    exitMs: runs.map((r) => Math.round(r.exitMs)),
    readerCpuMs: runs.map((r) => Math.round(r.readerCpuMs)),
  };
}

export async function benchWsThroughput(ctx: BenchContext): Promise<BenchResult> {
  const missing = hubModuleMissing();
  if (missing) return { skipped: missing };
  const corpus = await ensureCorpus(ctx.quick ? QUICK_CORPUS_BYTES : FULL_CORPUS_BYTES);
  const runs = ctx.quick ? QUICK_RUNS : RUNS;
  const server = await startServerProcess({ cpuProfileDir: ctx.cpuProfileDir });
  try {
    const unavailable = await hubUnavailable(server);
    if (unavailable) return { skipped: unavailable };
    const cool = await keepServerWarm(server);
    const directRuns: CatRun[] = [];
    const serverRuns: CatRun[] = [];
    try {
      for (let i = 0; i < runs; i++) {
        directRuns.push(await catDirect(corpus));
        serverRuns.push(await catThroughServer(server, corpus));
        ctx.log(`ws-throughput ${i + 1}/${runs}: direct ${directRuns[i]!.mbps.toFixed(1)} MB/s, WebSocket ${serverRuns[i]!.mbps.toFixed(1)} MB/s`);
      }
    } finally {
      await cool();
    }
    const webSocket = catRunDetail(serverRuns);
    return [
      figure({
        id: "ws.throughput",
        label: `cat ${corpus.bytes / MIB} MiB via server to 1 WebSocket vs PTY in-process`,
        unit: "MB/s",
        value: median(serverRuns.map((r) => r.mbps)),
        baseline: median(directRuns.map((r) => r.mbps)),
        ratio: pairedRatio(serverRuns.map((r) => r.mbps), directRuns.map((r) => r.mbps)),
        baselineLabel: "PTY direct",
        goal: { on: "ratio", op: ">=", target: 0.9, source: "docs/design.md § Performance (ttyd: 0.70)" },
        valid: webSocket.complete,
        detail: {
          corpusBytes: corpus.bytes,
          expectedPtyBytes: corpus.ptyBytes,
          ratioOfMedians: round(median(serverRuns.map((r) => r.mbps)) / median(directRuns.map((r) => r.mbps))),
          webSocket,
          direct: catRunDetail(directRuns),
          note:
            "Both arms: keystroke → last byte of an end marker printed after the corpus; exitMs is a second keystroke → exit frame (WebSocket) or node-pty's exit event (direct). The WebSocket reader is a minimal FrameCounter (frames parsed off the socket, output counted, not copied), like websocat > /dev/null.",
        },
      }),
    ];
  } finally {
    await server.stop();
  }
}
