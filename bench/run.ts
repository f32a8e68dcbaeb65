/**
 * `npm run bench [-- --quick] [-- --only name[,name…]] [-- --cpu-prof DIR]`: every benchmark in
 * one process run, a table on stdout and the same as JSON in bench/results/latest.json.
 * `--cpu-prof DIR` makes every server child write a V8 CPU profile into DIR (the runner itself:
 * `node --cpu-prof bin/run-ts.js bench/run.ts`).
 * `WEBMUX_BENCH_QUICK=1` is `--quick` (fewer bytes, keys and rounds: for iterating, not for figures).
 * Exits 1 only when a benchmark broke (threw); a missed goal is a FAIL row, not a crash.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import { figure, formatTable, isSkipped, machineInfo, type BenchContext, type BenchOutcome, type BenchResult } from "./report.ts";
import { round } from "./stats.ts";

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
const RESULTS_FILE = join(BENCH_DIR, "results", "latest.json");

type Benchmark = { name: string; run: (ctx: BenchContext) => Promise<BenchResult> };

/** Another engineer's benchmark, included when its module exists (imported dynamically). */
const AGENT_RUN_MODULE = join(BENCH_DIR, "agent-run.ts");

async function runAgentRun(): Promise<BenchResult> {
  if (!existsSync(AGENT_RUN_MODULE)) return { skipped: "bench/agent-run.ts not present" };
  const mod = (await import(pathToFileURL(AGENT_RUN_MODULE).href)) as { benchAgentRun?: () => Promise<{ p50Ms: number; p99Ms: number }> };
  if (typeof mod.benchAgentRun !== "function") return { skipped: "bench/agent-run.ts exports no benchAgentRun()" };
  const { p50Ms, p99Ms } = await mod.benchAgentRun();
  return [
    figure({ id: "agent.run.p50", label: "Agent API run, p50", unit: "ms", value: p50Ms }),
    figure({ id: "agent.run.p99", label: "Agent API run, p99", unit: "ms", value: p99Ms }),
  ];
}

/** In run order: in-process PTY figures first, then the server's. */
const BENCHMARKS: Benchmark[] = [
  { name: "pty-throughput", run: async (ctx) => (await import("./pty-throughput.ts")).benchPtyThroughput(ctx) },
  { name: "idle-memory", run: async (ctx) => (await import("./idle-memory.ts")).benchIdleMemory(ctx) },
  { name: "memory-return", run: async (ctx) => (await import("./memory-return.ts")).benchMemoryReturn(ctx) },
  { name: "ws-throughput", run: async (ctx) => (await import("./ws-throughput.ts")).benchWsThroughput(ctx) },
  { name: "fan-out", run: async (ctx) => (await import("./fan-out.ts")).benchFanOut(ctx) },
  { name: "echo-latency", run: async (ctx) => (await import("./echo-latency.ts")).benchEchoLatency(ctx) },
  { name: "interrupt-flood", run: async (ctx) => (await import("./interrupt-flood.ts")).benchInterruptFlood(ctx) },
  { name: "resume-cost", run: async (ctx) => (await import("./resume-cost.ts")).benchResumeCost(ctx) },
  { name: "compression", run: async (ctx) => (await import("./compression.ts")).benchCompression(ctx) },
  { name: "paint-time", run: async (ctx) => (await import("./paint-time.ts")).benchPaintTime(ctx) },
  { name: "snapshot-size", run: async (ctx) => (await import("./snapshot-size.ts")).benchSnapshotSize(ctx) },
  { name: "agent-run", run: runAgentRun },
  { name: "session-host", run: async (ctx) => (await import("./session-host.ts")).benchSessionHost(ctx) },
];

function usage(): never {
  process.stderr.write(
    `usage: npm run bench -- [--quick] [--only NAME[,NAME…]] [--cpu-prof DIR]\nbenchmarks: ${BENCHMARKS.map((b) => b.name).join(", ")}\n`,
  );
  process.exit(2);
}

function parseArgs(argv: string[]): { quick: boolean; only: Set<string> | null; cpuProfileDir: string | null } {
  let quick = process.env.WEBMUX_BENCH_QUICK === "1";
  let only: Set<string> | null = null;
  let cpuProfileDir: string | null = null;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--quick") quick = true;
    else if (arg === "--cpu-prof") {
      const value = argv[++i];
      if (!value) usage();
      cpuProfileDir = resolve(value);
      mkdirSync(cpuProfileDir, { recursive: true });
    }
    else if (arg === "--only" || arg.startsWith("--only=")) {
      const value = arg === "--only" ? argv[++i] : arg.slice("--only=".length);
      if (!value) usage();
      only = new Set(value.split(",").map((s) => s.trim()).filter(Boolean));
      for (const name of only) if (!BENCHMARKS.some((b) => b.name === name)) usage();
    } else usage();
  }
  return { quick, only, cpuProfileDir };
}

async function main(): Promise<void> {
  const { quick, only, cpuProfileDir } = parseArgs(process.argv.slice(2));
  const machine = machineInfo();
  const ctx: BenchContext = { quick, cpuProfileDir, log: (line) => process.stderr.write(`  ${line}\n`) };
  process.stderr.write(`webmux bench on ${machine.cores} cores (${machine.cpuModel}), node ${machine.node}${quick ? ", --quick" : ""}\n`);
  const started = performance.now();
  const outcomes: BenchOutcome[] = [];
  for (const bench of BENCHMARKS) {
    if (only && !only.has(bench.name)) continue;
    process.stderr.write(`${bench.name}…\n`);
    const t0 = performance.now();
    let outcome: BenchOutcome;
    try {
      const result = await bench.run(ctx);
      const seconds = round((performance.now() - t0) / 1000, 1);
      outcome = isSkipped(result)
        ? { name: bench.name, status: "skipped", reason: result.skipped, seconds, figures: [] }
        : { name: bench.name, status: "ok", seconds, figures: result };
    } catch (err) {
      const seconds = round((performance.now() - t0) / 1000, 1);
      outcome = { name: bench.name, status: "error", reason: (err as Error).stack ?? String(err), seconds, figures: [] };
    }
    process.stderr.write(`${bench.name}: ${outcome.status}${outcome.reason && outcome.status === "skipped" ? ` (${outcome.reason})` : ""} in ${outcome.seconds} s\n`);
    outcomes.push(outcome);
  }
  const totalSeconds = round((performance.now() - started) / 1000, 1);
  const report = {
    createdAt: new Date().toISOString(),
    machine: { ...machine, loadAverageAtEnd: machineInfo().loadAverage },
    options: { quick, only: only ? [...only] : null },
    totalSeconds,
    benchmarks: outcomes,
  };
  mkdirSync(dirname(RESULTS_FILE), { recursive: true });
  writeFileSync(RESULTS_FILE, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`\nwebmux bench: ${machine.cores} cores, ${machine.cpuModel}, node ${machine.node}, ${machine.os}, load ${machine.loadAverage.join(" ")}\n\n`);
  process.stdout.write(`${formatTable(outcomes)}\n\n`);
  process.stdout.write(`total ${totalSeconds} s; JSON in ${RESULTS_FILE}\n`);
  // Exit explicitly: a leftover handle of a benchmark (worker, socket) must not keep the run alive.
  process.exit(outcomes.some((o) => o.status === "error") ? 1 : 0);
}

await main();
