/**
 * What a benchmark hands back, and how the runner prints it. A figure is a value measured in
 * the same run as its baseline; the ratio (value / baseline) is what a goal usually judges,
 * because absolute numbers on a shared 2-core machine drift from run to run.
 */
import { cpus, loadavg, release, totalmem, type as osType } from "node:os";
import { execFileSync } from "node:child_process";

export type Goal = {
  /** what the goal judges: the ratio to the baseline, or the value itself */
  on: "ratio" | "value";
  op: ">=" | "<=" | "==";
  target: number;
  /** where the goal comes from (a section of docs/, or "chosen" when none gives a number) */
  source: string;
};

export type Figure = {
  /** stable key, e.g. "pty.throughput" */
  id: string;
  label: string;
  unit: string;
  value: number;
  baseline: number | null;
  baselineLabel: string | null;
  /** value / baseline */
  ratio: number | null;
  goal: Goal | null;
  /** null when there is no goal; false too when the figure is invalid */
  pass: boolean | null;
  /** false when the run did not measure what the figure claims (`valid` of FigureInput): reported as INVALID, not as a missed goal */
  valid: boolean;
  /** samples, byte counts and anything else a reader needs to trust the figure */
  detail?: Record<string, unknown>;
};

export type FigureInput = {
  id: string;
  label: string;
  unit: string;
  value: number;
  baseline?: number | null;
  baselineLabel?: string | null;
  goal?: Goal | null;
  /** a figure can fail for a reason the goal does not see (e.g. bytes missing) */
  valid?: boolean;
  /** the ratio when it is not value / baseline: alternating arms give the median of paired rounds (stats.ts pairedRatio) */
  ratio?: number;
  detail?: Record<string, unknown>;
};

/** A benchmark that cannot run here says why instead of failing the whole run. */
export type Skipped = { skipped: string };

export type BenchResult = Figure[] | Skipped;

export type BenchContext = {
  /** smaller sizes and fewer repetitions */
  quick: boolean;
  /** progress line on stderr */
  log: (line: string) => void;
  /** `--cpu-prof DIR`: server processes write V8 CPU profiles here (pass to startServerProcess) */
  cpuProfileDir: string | null;
};

export type BenchOutcome = {
  name: string;
  status: "ok" | "skipped" | "error";
  reason?: string;
  seconds: number;
  figures: Figure[];
};

function meets(goal: Goal, value: number, ratio: number | null): boolean | null {
  const subject = goal.on === "ratio" ? ratio : value;
  if (subject === null || !Number.isFinite(subject)) return false;
  switch (goal.op) {
    case ">=":
      return subject >= goal.target;
    case "<=":
      return subject <= goal.target;
    case "==":
      return subject === goal.target;
  }
}

/** A figure with its ratio and verdict computed. */
export function figure(input: FigureInput): Figure {
  const baseline = input.baseline ?? null;
  const ratio = input.ratio ?? (baseline === null || baseline === 0 ? null : input.value / baseline);
  const goal = input.goal ?? null;
  let pass = goal ? meets(goal, input.value, ratio) : null;
  if (input.valid === false) pass = false;
  return {
    id: input.id,
    label: input.label,
    unit: input.unit,
    value: input.value,
    baseline,
    baselineLabel: input.baselineLabel ?? null,
    ratio,
    goal,
    pass,
    valid: input.valid !== false,
    ...(input.detail ? { detail: input.detail } : {}),
  };
}

export function isSkipped(result: BenchResult): result is Skipped {
  return !Array.isArray(result);
}

export type MachineInfo = {
  cores: number;
  cpuModel: string;
  node: string;
  os: string;
  memoryGiB: number;
  loadAverage: number[];
  commit: string | null;
};

export function machineInfo(): MachineInfo {
  let commit: string | null = null;
  try {
    commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    commit = null;
  }
  const cpuList = cpus();
  return {
    cores: cpuList.length,
    cpuModel: cpuList[0]?.model ?? "unknown",
    node: process.version,
    os: `${osType()} ${release()}`,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    loadAverage: loadavg().map((l) => Math.round(l * 100) / 100),
    commit,
  };
}

function formatNumber(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  if (Number.isInteger(n) && Math.abs(n) >= 1000) return String(n);
  const abs = Math.abs(n);
  const digits = abs >= 100 ? 1 : abs >= 10 ? 2 : 3;
  return n.toFixed(digits);
}

function formatGoal(goal: Goal | null): string {
  if (!goal) return "—";
  const target = goal.op === "==" ? goal.target.toFixed(2) : String(goal.target);
  return `${goal.on === "ratio" ? "ratio" : "value"} ${goal.op} ${target}`;
}

function verdict(f: Figure): string {
  if (!f.valid) return "INVALID";
  return f.pass === null ? "info" : f.pass ? "PASS" : "FAIL";
}

/** The report as a plain-text table, one row per figure, skipped and failed benchmarks listed below it. */
export function formatTable(outcomes: readonly BenchOutcome[]): string {
  const header = ["figure", "value", "baseline", "ratio", "goal", "result"];
  const rows: string[][] = [];
  for (const outcome of outcomes) {
    for (const f of outcome.figures) {
      rows.push([
        f.label,
        `${formatNumber(f.value)} ${f.unit}`,
        f.baseline === null ? "—" : `${formatNumber(f.baseline)} ${f.unit}${f.baselineLabel ? ` (${f.baselineLabel})` : ""}`,
        f.ratio === null ? "—" : f.ratio.toFixed(f.goal?.op === "==" ? 4 : 3),
        formatGoal(f.goal),
        verdict(f),
      ]);
    }
  }
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd();
  const out = [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)];
  for (const outcome of outcomes) {
    if (outcome.status === "skipped") out.push(`${outcome.name}: skipped: ${outcome.reason}`);
    if (outcome.status === "error") out.push(`${outcome.name}: ERROR: ${outcome.reason}`);
  }
  return out.join("\n");
}
