/**
 * Where the CPU went during one run of a benchmark (docs/design.md § Where the CPU goes): the
 * machine's busy cores (`/proc/stat`) and, per process watched, the CPU of its main thread and of
 * all its other threads together (`/proc/<pid>/task/<tid>/schedstat`, nanoseconds on a CPU, kernel
 * time included). A throughput figure that falls short of the direct PTY reads off it whether the
 * cores were saturated, and what a MiB cost each server beside ttyd in the same round.
 *
 * Linux only: elsewhere the meter reads nothing and `stop` returns null. A thread that ends during
 * the run takes its time with it (a session host's or a worker's thread that was started and
 * ended within one run).
 */
import { readdirSync, readFileSync } from "node:fs";

/** CPU of one process over the run, in ms. */
export type ProcessCpu = { mainMs: number; otherThreadsMs: number };

export type CpuUse = {
  wallMs: number;
  /** busy time of all cores over the run / its wall time: 2 on a saturated 2-core machine */
  machineBusyCores: number;
  /** per watched process (by the caller's name for it); absent when it could not be read at both ends */
  processes: Record<string, ProcessCpu>;
};

type ThreadTimes = Map<number, number>;

/** Nanoseconds on a CPU per thread of `pid`, or null when the process is gone or /proc is not Linux's. */
export function readThreadTimes(pid: number): ThreadTimes | null {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return null;
  }
  const times: ThreadTimes = new Map();
  for (const tid of tids) {
    try {
      const ns = Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
      if (Number.isFinite(ns)) times.set(Number(tid), ns);
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return times;
}

/** Busy and total jiffies of all cores together (the first line of /proc/stat), and the cores counted, or null. */
export function readMachineTicks(): { busy: number; total: number; cores: number } | null {
  let lines: string[];
  try {
    lines = readFileSync("/proc/stat", "utf8").split("\n");
  } catch {
    return null;
  }
  const fields = lines[0]!.trim().split(/\s+/);
  if (fields[0] !== "cpu") return null;
  // user nice system idle iowait irq softirq steal (guest time is already in user)
  const [user, nice, system, idle, iowait, irq, softirq, steal] = fields.slice(1, 9).map(Number) as number[];
  const busy = user! + nice! + system! + irq! + softirq! + steal!;
  const cores = lines.filter((l) => /^cpu\d+\s/.test(l)).length || 1;
  return { busy, total: busy + idle! + iowait!, cores };
}

/** The CPU of `pid`'s threads between two readings: its main thread (tid = pid) and the rest. */
export function processCpuBetween(pid: number, before: ThreadTimes, after: ThreadTimes): ProcessCpu {
  let mainNs = 0;
  let otherNs = 0;
  for (const [tid, ns] of after) {
    const spent = ns - (before.get(tid) ?? 0);
    if (tid === pid) mainNs += spent;
    else otherNs += spent;
  }
  return { mainMs: mainNs / 1e6, otherThreadsMs: otherNs / 1e6 };
}

/**
 * Start measuring; `stop` gives what was used since. `pids` names the processes to watch
 * (a null pid is skipped: an arm without a session host, say).
 */
export function startCpuMeter(pids: Record<string, number | null>): { stop(): CpuUse | null } {
  const started = performance.now();
  const machine = readMachineTicks();
  const before = new Map<string, { pid: number; times: ThreadTimes }>();
  for (const [name, pid] of Object.entries(pids)) {
    if (pid === null) continue;
    const times = readThreadTimes(pid);
    if (times) before.set(name, { pid, times });
  }
  return {
    stop() {
      const machineAfter = readMachineTicks();
      if (!machine || !machineAfter) return null;
      const total = machineAfter.total - machine.total;
      const cores = total > 0 ? ((machineAfter.busy - machine.busy) / total) * machineAfter.cores : 0;
      const processes: Record<string, ProcessCpu> = {};
      for (const [name, { pid, times }] of before) {
        const after = readThreadTimes(pid);
        if (after) processes[name] = processCpuBetween(pid, times, after);
      }
      // Wall time ends after the last read, so that the interval timed encloses every CPU figure:
      // a thread that runs while the meter reads cannot seem to use more than the wall time.
      const wallMs = performance.now() - started;
      return { wallMs, machineBusyCores: cores, processes };
    },
  };
}

/** One run's CPU per MiB of output, per watched process (main thread, other threads, both), rounded to 0.1 ms. */
export function cpuPerMiB(use: CpuUse | null, bytes: number): Record<string, { main: number; other: number; total: number }> | null {
  if (!use || bytes <= 0) return null;
  const mib = bytes / (1024 * 1024);
  const perMiB: Record<string, { main: number; other: number; total: number }> = {};
  const r = (ms: number) => Math.round((ms / mib) * 10) / 10;
  for (const [name, p] of Object.entries(use.processes)) {
    perMiB[name] = { main: r(p.mainMs), other: r(p.otherThreadsMs), total: r(p.mainMs + p.otherThreadsMs) };
  }
  return perMiB;
}
