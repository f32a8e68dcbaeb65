/**
 * The PTY throughput figure and the headless screen's cost (docs/design.md § Performance):
 * `cat` of the corpus through
 *   - node-pty alone (the baseline: count bytes until exit),
 *   - a real Session from SessionRegistry (ring buffer, scanner and headless screen attached),
 *   - the same session path without the headless screen.
 * Session has no switch to leave its headless screen out, so the third arm rebuilds what
 * Session.handleOutput does on the hot path minus `screen.write`: the same spawnPty, a
 * RingBuffer and a TerminalScanner, fed chunk by chunk.
 * The arms alternate (baseline, session, without headless, baseline, …) so drift in the
 * machine's load hits all of them alike; value and baseline are medians, the ratio is the
 * median of the rounds' ratios (stats.ts pairedRatio: the first rounds run colder than the last).
 */
import { tmpdir } from "node:os";
import { performance } from "node:perf_hooks";
import { spawnPty } from "../server/pty/index.ts";
import { SessionRegistry } from "../server/session/registry.ts";
import { DEFAULT_BUFFER_BYTES, RingBuffer } from "../server/session/ring-buffer.ts";
import { TerminalScanner } from "../server/vt/terminal-scanner.ts";
import { ensureCorpus, FULL_CORPUS_BYTES, QUICK_CORPUS_BYTES, type Corpus } from "./corpus.ts";
import { BENCH_COLS, BENCH_ROWS, spawnDirect } from "./direct-pty.ts";
import { figure, type BenchContext, type BenchResult } from "./report.ts";
import { median, megabytesPerSecond, MIB, pairedRatio, round } from "./stats.ts";

/** Rounds: on a noisy 2-core VM one arm alone can swing 2× between rounds, so the median needs many pairs. */
const RUNS = 11;
const QUICK_RUNS = 3;
/** A short `cat` per arm first, so worker start-up and JIT warm-up stay out of the figures. */
const WARMUP_BYTES = 2 * MIB;

/** `ms` is start → exit event (the figure); `lastByteMs` start → last chunk read, to tell reading from exit reporting. */
type Run = { bytes: number; ms: number; mbps: number; lastByteMs: number };
type SessionRun = Run & { headlessDroppedBytes: number; headlessParsedBytes: number };

async function catWithNodePty(corpus: Corpus): Promise<Run> {
  const start = performance.now();
  const direct = spawnDirect(["cat", corpus.path]);
  let last = start;
  direct.onChunk(() => (last = performance.now()));
  await direct.exited;
  const ms = performance.now() - start;
  return { bytes: direct.bytes, ms, mbps: megabytesPerSecond(direct.bytes, ms), lastByteMs: last - start };
}

async function catWithSession(registry: SessionRegistry, corpus: Corpus): Promise<SessionRun> {
  const start = performance.now();
  const session = registry.create({ command: ["cat", corpus.path], cwd: tmpdir(), cols: BENCH_COLS, rows: BENCH_ROWS });
  // create() starts the PTY synchronously and its events come later: subscribing now misses nothing.
  let last = start;
  session.events.on("output", () => (last = performance.now()));
  await new Promise<void>((resolve) => session.events.on("exit", () => resolve()));
  const ms = performance.now() - start;
  const bytes = session.stats().end;
  const stats = session.stats().screen;
  await registry.remove(session.id);
  return {
    bytes,
    ms,
    mbps: megabytesPerSecond(bytes, ms),
    lastByteMs: last - start,
    headlessDroppedBytes: stats.droppedBytes,
    headlessParsedBytes: stats.parsedBytes,
  };
}

/** Session's hot path without the headless screen (see the module comment). */
async function catWithRingAndScanner(corpus: Corpus): Promise<Run> {
  const start = performance.now();
  const ring = new RingBuffer(DEFAULT_BUFFER_BYTES);
  const scanner = new TerminalScanner();
  const pty = spawnPty({
    command: ["cat", corpus.path],
    cwd: tmpdir(),
    env: { ...process.env, TERM: "xterm-256color" } as Record<string, string>,
    cols: BENCH_COLS,
    rows: BENCH_ROWS,
  });
  let last = start;
  pty.onData((chunk) => {
    ring.append(chunk);
    scanner.feed(chunk);
    last = performance.now();
  });
  await pty.exited;
  const ms = performance.now() - start;
  return { bytes: ring.end, ms, mbps: megabytesPerSecond(ring.end, ms), lastByteMs: last - start };
}

function summary(runs: readonly Run[], expectedBytes: number) {
  return {
    runsMBps: runs.map((r) => round(r.mbps, 1)),
    runsMs: runs.map((r) => Math.round(r.ms)),
    /** exit event after the last byte read: time the PTY layer spends reporting the exit */
    exitAfterLastByteMs: runs.map((r) => Math.round(r.ms - r.lastByteMs)),
    medianMBpsToLastByte: round(median(runs.map((r) => megabytesPerSecond(r.bytes, r.lastByteMs))), 1),
    bytes: runs.map((r) => r.bytes),
    allBytes: runs.every((r) => r.bytes === expectedBytes),
  };
}

export async function benchPtyThroughput(ctx: BenchContext): Promise<BenchResult> {
  const corpus = await ensureCorpus(ctx.quick ? QUICK_CORPUS_BYTES : FULL_CORPUS_BYTES);
  const warmup = await ensureCorpus(WARMUP_BYTES);
  const runs = ctx.quick ? QUICK_RUNS : RUNS;
  const registry = new SessionRegistry({ shell: "/bin/bash", bufferBytes: DEFAULT_BUFFER_BYTES, spawnPty });
  const direct: Run[] = [];
  const session: SessionRun[] = [];
  const bare: Run[] = [];
  try {
    await catWithNodePty(warmup);
    await catWithSession(registry, warmup);
    await catWithRingAndScanner(warmup);
    for (let i = 0; i < runs; i++) {
      direct.push(await catWithNodePty(corpus));
      session.push(await catWithSession(registry, corpus));
      bare.push(await catWithRingAndScanner(corpus));
      ctx.log(
        `pty-throughput ${i + 1}/${runs}: node-pty ${direct[i]!.mbps.toFixed(1)} MB/s, session ${session[i]!.mbps.toFixed(1)} MB/s, without headless ${bare[i]!.mbps.toFixed(1)} MB/s`,
      );
    }
  } finally {
    await registry.closeAll();
  }

  const directMBps = median(direct.map((r) => r.mbps));
  const sessionMBps = median(session.map((r) => r.mbps));
  const bareMBps = median(bare.map((r) => r.mbps));
  const sessionDetail = {
    ...summary(session, corpus.ptyBytes),
    headlessDroppedBytes: session.map((r) => r.headlessDroppedBytes),
    headlessParsedBytes: session.map((r) => r.headlessParsedBytes),
  };
  const common = { corpusBytes: corpus.bytes, expectedPtyBytes: corpus.ptyBytes, runsPerArm: runs };
  const sessionRates = session.map((r) => r.mbps);
  return [
    figure({
      id: "pty.throughput",
      label: `PTY read, cat ${corpus.bytes / MIB} MiB, Session (ring+headless) vs node-pty alone`,
      unit: "MB/s",
      value: sessionMBps,
      baseline: directMBps,
      baselineLabel: "node-pty alone",
      ratio: pairedRatio(sessionRates, direct.map((r) => r.mbps)),
      goal: { on: "ratio", op: ">=", target: 0.9, source: "docs/design.md § Performance" },
      // The session must have every byte; node-pty alone may lose a tail at exit (see server/pty/node-pty.ts).
      valid: sessionDetail.allBytes,
      detail: { ...common, ratioOfMedians: round(sessionMBps / directMBps), session: sessionDetail, nodePty: summary(direct, corpus.ptyBytes) },
    }),
    figure({
      id: "pty.headless-cost",
      label: `Headless cost, cat ${corpus.bytes / MIB} MiB, Session vs ring+scanner only`,
      unit: "MB/s",
      value: sessionMBps,
      baseline: bareMBps,
      baselineLabel: "without headless",
      ratio: pairedRatio(sessionRates, bare.map((r) => r.mbps)),
      goal: { on: "ratio", op: ">=", target: 0.9, source: "chosen (docs/design.md § Performance)" },
      detail: {
        ...common,
        ratioOfMedians: round(sessionMBps / bareMBps),
        withoutHeadless: summary(bare, corpus.ptyBytes),
        note: "Session has no switch to disable its headless screen; the baseline arm is spawnPty + RingBuffer + TerminalScanner, i.e. Session.handleOutput minus screen.write.",
      },
    }),
  ];
}
