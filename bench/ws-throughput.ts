/**
 * Throughput: `cat` of the corpus through the server (its own process) to one WebSocket client,
 * as a ratio to reading the same PTY directly in this process with node-pty, and to the same
 * `cat` through ttyd (bench/ttyd.ts; skipped with a note when it cannot run). All arms run the
 * same program and stop the clock on the same event, the last byte of an end marker (see
 * cat-stream.ts); the exit delay is reported beside it. The WebSocket client is a FrameCounter
 * (frame-counter.ts), a minimal reader that only counts, so the figure is the server's cost rather
 * than a client library's; ttyd's reader is its twin (TtydReader). Every round runs every arm
 * once, in an order rotated round by round; value and baseline are their medians, the ratio the
 * median of the paired rounds (stats.ts pairedRatio).
 */
import { catDirect, catThroughServer, catThroughTtyd, withCatServers, type CatRun } from "./cat-stream.ts";
import { cpuPerMiB } from "./cpu-meter.ts";
import { ensureCorpus, FULL_CORPUS_BYTES, QUICK_CORPUS_BYTES } from "./corpus.ts";
import { hubModuleMissing } from "./hub-probe.ts";
import { figure, type BenchContext, type BenchResult } from "./report.ts";
import { median, MIB, pairedRatio, round } from "./stats.ts";
import { runRounds, type Arm } from "./rounds.ts";

/** Runs per arm: an odd count, so the median is one real run; five, because one run of a loaded machine can be off by 2×. */
const RUNS = 5;
/** `--quick`: still an odd count (too few for a figure to trust). */
const QUICK_RUNS = 3;

/** What a reader of the JSON needs to trust one arm: every run, the frame sizes, the exit delay, the CPU of reader, server and machine. */
export function catRunDetail(runs: readonly CatRun[]) {
  const first = (r: CatRun) => r.readers[0]!;
  const perMiB = runs.map((r) => cpuPerMiB(r.cpu, first(r).bytes));
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
    /** per run: busy cores of the whole machine over the run (2 = both cores saturated) */
    machineBusyCores: runs.map((r) => (r.cpu ? round(r.cpu.machineBusyCores, 2) : null)),
    /** per process watched (server, session host, ttyd): the median over the runs of CPU ms per MiB, main thread and other threads */
    cpuMsPerMiB: medianCpuPerMiB(perMiB),
  };
}

function medianCpuPerMiB(runs: readonly (ReturnType<typeof cpuPerMiB>)[]): Record<string, { main: number; other: number; total: number }> | null {
  const measured = runs.filter((r) => r !== null);
  if (measured.length === 0) return null;
  const names = new Set(measured.flatMap((r) => Object.keys(r)));
  const result: Record<string, { main: number; other: number; total: number }> = {};
  for (const name of names) {
    const of = (key: "main" | "other" | "total") => round(median(measured.flatMap((r) => (r[name] ? [r[name]![key]] : []))), 1);
    result[name] = { main: of("main"), other: of("other"), total: of("total") };
  }
  return result;
}

/** One line for the log: what a MiB cost each watched process in this run, and how busy the machine was. */
export function describeCpu(run: CatRun | undefined): string {
  if (!run?.cpu) return "";
  const perMiB = cpuPerMiB(run.cpu, run.readers[0]!.bytes) ?? {};
  const parts = Object.entries(perMiB).map(([name, p]) => `${name} ${p.total} ms/MiB (main ${p.main})`);
  return `${parts.join(", ")}${parts.length > 0 ? ", " : ""}${run.cpu.machineBusyCores.toFixed(2)} cores busy`;
}

export async function benchWsThroughput(ctx: BenchContext): Promise<BenchResult> {
  const missing = hubModuleMissing();
  if (missing) return { skipped: missing };
  const corpus = await ensureCorpus(ctx.quick ? QUICK_CORPUS_BYTES : FULL_CORPUS_BYTES);
  const runs = ctx.quick ? QUICK_RUNS : RUNS;
  return withCatServers(ctx, "ws-throughput", corpus, async ({ server, ttyd }) => {
    const arms = new Map<string, Arm<CatRun>>([
      ["direct", { run: () => catDirect(corpus), runs: [] }],
      ["webmux", { run: () => catThroughServer(server, corpus), runs: [] }],
    ]);
    if (ttyd) arms.set("ttyd", { run: () => catThroughTtyd(ttyd, corpus), runs: [] });
    await runRounds(arms, runs, (i) => {
      const rate = (name: string) => arms.get(name)?.runs[i]?.mbps.toFixed(1) ?? "—";
      ctx.log(`ws-throughput ${i + 1}/${runs}: direct ${rate("direct")} MB/s, webmux ${rate("webmux")} MB/s, ttyd ${rate("ttyd")} MB/s`);
      for (const name of ["direct", "webmux", "ttyd"]) {
        const cpu = describeCpu(arms.get(name)?.runs[i]);
        if (cpu) ctx.log(`  ${name}: ${cpu}`);
      }
    });
    const directRuns = arms.get("direct")!.runs;
    const serverRuns = arms.get("webmux")!.runs;
    const ttydRuns = arms.get("ttyd")?.runs ?? null;
    const rates = (r: readonly CatRun[]) => r.map((x) => x.mbps);
    const webSocket = catRunDetail(serverRuns);
    const figures = [
      figure({
        id: "ws.throughput",
        label: `cat ${corpus.bytes / MIB} MiB via server to 1 WebSocket vs PTY in-process`,
        unit: "MB/s",
        value: median(rates(serverRuns)),
        baseline: median(rates(directRuns)),
        ratio: pairedRatio(rates(serverRuns), rates(directRuns)),
        baselineLabel: "PTY direct",
        goal: { on: "ratio", op: ">=", target: 0.9, source: "docs/design.md § Performance" },
        valid: webSocket.complete,
        detail: {
          corpusBytes: corpus.bytes,
          expectedPtyBytes: corpus.ptyBytes,
          ratioOfMedians: round(median(rates(serverRuns)) / median(rates(directRuns))),
          webSocket,
          direct: catRunDetail(directRuns),
          ttyd: ttydRuns ? catRunDetail(ttydRuns) : null,
          note:
            "All arms: keystroke → last byte of an end marker printed after the corpus; exitMs is a second keystroke → exit frame (webmux), node-pty's exit event (direct) or the connection closing (ttyd). The WebSocket readers are minimal (frames parsed off the socket, output counted, not copied), like websocat > /dev/null.",
        },
      }),
    ];
    if (ttydRuns) {
      figures.push(
        figure({
          id: "ws.throughput.vs-ttyd",
          label: `cat ${corpus.bytes / MIB} MiB to 1 WebSocket: webmux vs ttyd`,
          unit: "MB/s",
          value: median(rates(serverRuns)),
          baseline: median(rates(ttydRuns)),
          ratio: pairedRatio(rates(serverRuns), rates(ttydRuns)),
          baselineLabel: "ttyd",
          goal: { on: "ratio", op: ">=", target: 1, source: "docs/design.md § Performance" },
          valid: webSocket.complete && ttydRuns.every((r) => r.complete),
        }),
        figure({
          id: "ws.throughput.ttyd",
          label: `cat ${corpus.bytes / MIB} MiB to 1 WebSocket: ttyd vs PTY in-process`,
          unit: "MB/s",
          value: median(rates(ttydRuns)),
          baseline: median(rates(directRuns)),
          ratio: pairedRatio(rates(ttydRuns), rates(directRuns)),
          baselineLabel: "PTY direct",
          valid: ttydRuns.every((r) => r.complete),
        }),
      );
    }
    return figures;
  });
}
