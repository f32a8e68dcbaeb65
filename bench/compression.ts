/**
 * The compression figure (docs/design.md § Performance):
 * bytes on the wire for the `cat` of a 10 MiB source file (the corpus: real
 * TypeScript) through `/ws/s/{id}`, with `?compress=1` and a permessage-deflate offer vs without.
 * Bytes on the wire are the TCP bytes the client's socket read between the keystroke that starts
 * `cat` and the end marker (frame headers included; the handshake and the attach frames are not
 * part of the `cat`). Both arms must deliver exactly the same payload. The arms alternate. Both
 * read with the `ws` library's client (terminal-client.ts): the minimal FrameCounter the other
 * throughput figures use negotiates no permessage-deflate, and the throughput figure compares
 * the two arms like with like.
 */
import { catThroughServer, keepServerWarm, type CatRun } from "./cat-stream.ts";
import { ensureCorpus } from "./corpus.ts";
import { hubModuleMissing, hubUnavailable } from "./hub-probe.ts";
import { figure, type BenchContext, type BenchResult } from "./report.ts";
import { startServerProcess } from "./server-process.ts";
import { median, MIB, round } from "./stats.ts";

/** The file size. */
const SOURCE_BYTES = 10 * MIB;
/** Runs per arm: byte counts barely vary, three show that they do not. */
const RUNS = 3;

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
  const server = await startServerProcess({ cpuProfileDir: ctx.cpuProfileDir });
  try {
    const unavailable = await hubUnavailable(server);
    if (unavailable) return { skipped: unavailable };
    const cool = await keepServerWarm(server);
    const plain: CatRun[] = [];
    const compressed: CatRun[] = [];
    try {
      for (let i = 0; i < RUNS; i++) {
        plain.push(await catThroughServer(server, corpus, { reader: "ws" }));
        compressed.push(await catThroughServer(server, corpus, { compress: true, reader: "ws" }));
        ctx.log(
          `compression ${i + 1}/${RUNS}: plain ${plain[i]!.readers[0]!.wireBytes} B, compress=1 ${compressed[i]!.readers[0]!.wireBytes} B on the wire`,
        );
      }
    } finally {
      await cool();
    }
    const wire = (runs: CatRun[]) => median(runs.map((r) => r.readers[0]!.wireBytes));
    const valid = plain.every((r) => r.complete) && compressed.every((r) => r.complete);
    return [
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
        },
      }),
      figure({
        id: "compression.throughput",
        label: `cat ${SOURCE_BYTES / MIB} MiB source via /ws/s/{id}: throughput with compress=1 vs without`,
        unit: "MB/s",
        value: median(compressed.map((r) => r.mbps)),
        baseline: median(plain.map((r) => r.mbps)),
        baselineLabel: "no compress",
        valid,
      }),
    ];
  } finally {
    await server.stop();
  }
}
