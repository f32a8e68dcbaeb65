/**
 * The fan-out figure (docs/design.md § Performance):
 * `cat` of the corpus through the server to 1 controller + 10 observers, every client
 * reading at full speed and receiving every byte (counted, and the end marker checked, per
 * client), as a ratio to the same `cat` to a single client in the same run. The clock stops
 * when the slowest client has the last byte. All clients live in this process, so their reading
 * shares the machine with the server: in both arms every client is a FrameCounter
 * (frame-counter.ts), a minimal reader that parses frames off the socket and only counts output
 * bytes — what `websocat … > /dev/null` would cost, not what a WebSocket library's copying costs
 * — and readerCpuMs in the detail says what the readers took. The arms run in an order rotated
 * round by round (rounds.ts); value and baseline are their medians, the ratio the median of the
 * paired rounds (stats.ts pairedRatio).
 */
import { catThroughServer, keepServerWarm, type CatRun } from "./cat-stream.ts";
import { ensureCorpus, FULL_CORPUS_BYTES, QUICK_CORPUS_BYTES } from "./corpus.ts";
import { hubModuleMissing, hubUnavailable } from "./hub-probe.ts";
import { figure, type BenchContext, type BenchResult } from "./report.ts";
import { startServerProcess } from "./server-process.ts";
import { median, MIB, pairedRatio, round } from "./stats.ts";
import { catRunDetail } from "./ws-throughput.ts";
import { runRounds, type Arm } from "./rounds.ts";

/** The audience of the fan-out figure (docs/design.md § Performance): one controller and ten observers. */
const OBSERVERS = 10;
/** Rounds: at least five for a median (docs/design.md § Performance); with three, one slow round moved the ratio 0.77–0.91. */
const RUNS = 5;

function fanOutDetail(runs: readonly CatRun[]) {
  return {
    ...catRunDetail(runs),
    /** per run: the spread between the first and the last client to get the last byte */
    finishSpreadMs: runs.map((r) => Math.round(Math.max(...r.readers.map((c) => c.ms)) - Math.min(...r.readers.map((c) => c.ms)))),
    /** per run: bytes delivered to all clients together per second */
    aggregateMBps: runs.map((r) => round((r.readers.reduce((sum, c) => sum + c.bytes, 0) / 1e6 / r.ms) * 1000, 1)),
    clientsComplete: runs.map((r) => r.readers.filter((c) => c.complete).length),
    /** per run: close codes of clients the server cut before the end (4408: fell too far behind) */
    clientsCut: runs.map((r) => r.readers.flatMap((c) => (c.closeCode === null ? [] : [c.closeCode]))),
  };
}

export async function benchFanOut(ctx: BenchContext): Promise<BenchResult> {
  const missing = hubModuleMissing();
  if (missing) return { skipped: missing };
  const corpus = await ensureCorpus(ctx.quick ? QUICK_CORPUS_BYTES : FULL_CORPUS_BYTES);
  const server = await startServerProcess({ cpuProfileDir: ctx.cpuProfileDir });
  try {
    const unavailable = await hubUnavailable(server);
    if (unavailable) return { skipped: unavailable };
    const cool = await keepServerWarm(server);
    const arms = new Map<string, Arm<CatRun>>([
      ["single", { run: () => catThroughServer(server, corpus), runs: [] }],
      ["fan-out", { run: () => catThroughServer(server, corpus, { observers: OBSERVERS }), runs: [] }],
    ]);
    const single = arms.get("single")!.runs;
    const fanOut = arms.get("fan-out")!.runs;
    try {
      await runRounds(arms, RUNS, (i) =>
        ctx.log(`fan-out ${i + 1}/${RUNS}: 1 client ${single[i]!.mbps.toFixed(1)} MB/s, ${OBSERVERS + 1} clients ${fanOut[i]!.mbps.toFixed(1)} MB/s each`),
      );
    } finally {
      await cool();
    }
    const fanOutRuns = fanOutDetail(fanOut);
    return [
      figure({
        id: "ws.fan-out",
        label: `cat ${corpus.bytes / MIB} MiB via server to 1 controller + ${OBSERVERS} observers vs 1 client`,
        unit: "MB/s",
        value: median(fanOut.map((r) => r.mbps)),
        baseline: median(single.map((r) => r.mbps)),
        ratio: pairedRatio(fanOut.map((r) => r.mbps), single.map((r) => r.mbps)),
        baselineLabel: "1 client",
        goal: { on: "ratio", op: ">=", target: 0.8, source: "docs/design.md § Performance" },
        valid: fanOut.every((r) => r.complete) && single.every((r) => r.complete),
        detail: {
          corpusBytes: corpus.bytes,
          expectedPtyBytes: corpus.ptyBytes,
          clients: OBSERVERS + 1,
          ratioOfMedians: round(median(fanOut.map((r) => r.mbps)) / median(single.map((r) => r.mbps))),
          fanOut: fanOutRuns,
          singleClient: catRunDetail(single),
          note:
            "MB/s per client: corpus bytes / (keystroke → the slowest client's last byte). All clients run in the benchmark process; in both arms each is a minimal reader (FrameCounter: frames parsed off the socket, output bytes counted, not joined or copied, like websocat > /dev/null), so readerCpuMs is the clients' whole cost.",
        },
      }),
    ];
  } finally {
    await server.stop();
  }
}
