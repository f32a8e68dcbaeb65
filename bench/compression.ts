/**
 * The compression figure (docs/design.md § Performance):
 * bytes on the wire for the `cat` of a 10 MiB source file (the corpus: real
 * TypeScript) through `/ws/s/{id}`, with `?compress=1` and a permessage-deflate offer vs without.
 * Bytes on the wire are the TCP bytes the client's socket read between the keystroke that starts
 * `cat` and the end marker (frame headers included; the handshake and the attach frames are not
 * part of the `cat`). Both arms must deliver exactly the same payload. The arms alternate. Both
 * read with the `ws` library's client (terminal-client.ts): the minimal FrameCounter the other
 * throughput figures use negotiates no permessage-deflate, and the throughput figure compares
 * the two arms like with like. A third arm is ttyd with its own compression (its libwebsockets
 * accepts the permessage-deflate offer; bench/ttyd.ts), read by the same `ws` client, for the
 * deflate throughput against ttyd. Every round runs every arm once, in an order rotated round by
 * round; ratios are medians of the rounds' ratios.
 */
import { catThroughServer, catThroughTtyd, withCatServers, type CatRun } from "./cat-stream.ts";
import { ensureCorpus } from "./corpus.ts";
import { hubModuleMissing } from "./hub-probe.ts";
import { figure, type BenchContext, type BenchResult } from "./report.ts";
import { median, MIB, pairedRatio, round } from "./stats.ts";
import { runRounds, type Arm } from "./rounds.ts";

/** A source file's size: big enough to be a stream, small enough for five rounds of three arms. */
const SOURCE_BYTES = 10 * MIB;
/** Rounds: byte counts barely vary, but the deflate throughput against ttyd needs a median of five. */
const RUNS = 5;
const QUICK_RUNS = 3;

function detail(runs: readonly CatRun[]) {
  const reader = (r: CatRun) => r.readers[0]!;
  return {
    reader: runs[0]?.reader ?? null,
    wireBytes: runs.map((r) => reader(r).wireBytes),
    payloadBytes: runs.map((r) => reader(r).bytes),
    frames: runs.map((r) => reader(r).frames),
    runsMBps: runs.map((r) => round(r.mbps, 1)),
    readerCpuMs: runs.map((r) => Math.round(r.readerCpuMs)),
    complete: runs.every((r) => r.complete),
  };
}

export async function benchCompression(ctx: BenchContext): Promise<BenchResult> {
  const missing = hubModuleMissing();
  if (missing) return { skipped: missing };
  const corpus = await ensureCorpus(SOURCE_BYTES);
  return withCatServers(ctx, "compression", corpus, async ({ server, ttyd }) => {
    const rounds = ctx.quick ? QUICK_RUNS : RUNS;
    const arms = new Map<string, Arm<CatRun>>([
      ["plain", { run: () => catThroughServer(server, corpus, { reader: "ws" }), runs: [] }],
      ["compressed", { run: () => catThroughServer(server, corpus, { compress: true, reader: "ws" }), runs: [] }],
    ]);
    if (ttyd) arms.set("ttyd", { run: () => catThroughTtyd(ttyd, corpus, { compress: true }), runs: [] });
    await runRounds(arms, rounds, (i) => {
      const run = (name: string) => arms.get(name)?.runs[i];
      const describe = (r: CatRun | undefined) => (r ? `${r.readers[0]!.wireBytes} B, ${r.mbps.toFixed(1)} MB/s` : "—");
      ctx.log(`compression ${i + 1}/${rounds}: plain ${describe(run("plain"))}; compress=1 ${describe(run("compressed"))}; ttyd deflate ${describe(run("ttyd"))}`);
    });
    const plain = arms.get("plain")!.runs;
    const compressed = arms.get("compressed")!.runs;
    const ttydRuns = arms.get("ttyd")?.runs ?? null;
    const wire = (runs: CatRun[]) => median(runs.map((r) => r.readers[0]!.wireBytes));
    const rates = (runs: CatRun[]) => runs.map((r) => r.mbps);
    const valid = plain.every((r) => r.complete) && compressed.every((r) => r.complete);
    const figures = [
      figure({
        id: "compression.wire-bytes",
        label: `cat ${SOURCE_BYTES / MIB} MiB source via /ws/s/{id}: wire bytes with compress=1 vs without`,
        unit: "B",
        value: wire(compressed),
        baseline: wire(plain),
        baselineLabel: "no compress",
        valid,
        detail: {
          corpusBytes: corpus.bytes,
          expectedPtyBytes: corpus.ptyBytes,
          compressed: detail(compressed),
          plain: detail(plain),
          ttydDeflate: ttydRuns ? detail(ttydRuns) : null,
        },
      }),
      figure({
        id: "compression.throughput",
        label: `cat ${SOURCE_BYTES / MIB} MiB source via /ws/s/{id}: throughput with compress=1 vs without`,
        unit: "MB/s",
        value: median(rates(compressed)),
        baseline: median(rates(plain)),
        ratio: pairedRatio(rates(compressed), rates(plain)),
        baselineLabel: "no compress",
        valid,
      }),
    ];
    if (ttydRuns) {
      const ttydValid = ttydRuns.every((r) => r.complete);
      figures.push(
        figure({
          id: "compression.throughput.vs-ttyd",
          label: `cat ${SOURCE_BYTES / MIB} MiB source, deflate: webmux compress=1 vs ttyd's deflate`,
          unit: "MB/s",
          value: median(rates(compressed)),
          baseline: median(rates(ttydRuns)),
          ratio: pairedRatio(rates(compressed), rates(ttydRuns)),
          baselineLabel: "ttyd deflate",
          goal: { on: "ratio", op: ">=", target: 1.2, source: "docs/design.md § Performance" },
          valid: valid && ttydValid,
        }),
        figure({
          id: "compression.wire-bytes.vs-ttyd",
          label: `cat ${SOURCE_BYTES / MIB} MiB source, deflate: wire bytes webmux compress=1 vs ttyd's deflate`,
          unit: "B",
          value: wire(compressed),
          baseline: wire(ttydRuns),
          baselineLabel: "ttyd deflate",
          valid: valid && ttydValid,
        }),
      );
    }
    return figures;
  });
}
