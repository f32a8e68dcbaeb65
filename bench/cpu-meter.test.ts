import { describe, expect, it } from "vitest";
import { cpuPerMiB, processCpuBetween, readMachineTicks, readThreadTimes, startCpuMeter } from "./cpu-meter.ts";

const linux = readMachineTicks() !== null;

describe("cpu meter", () => {
  it("splits a process's CPU into its main thread and the rest", () => {
    const before = new Map([
      [100, 1_000_000],
      [101, 5_000_000],
    ]);
    // thread 102 started during the run: all of its time counts
    const after = new Map([
      [100, 21_000_000],
      [101, 6_000_000],
      [102, 3_000_000],
    ]);
    expect(processCpuBetween(100, before, after)).toEqual({ mainMs: 20, otherThreadsMs: 4 });
    expect(cpuPerMiB({ wallMs: 1, machineBusyCores: 1, processes: { server: { mainMs: 20, otherThreadsMs: 4 } } }, 2 * 1024 * 1024)).toEqual({
      server: { main: 10, other: 2, total: 12 },
    });
    expect(cpuPerMiB(null, 1)).toBeNull();
  });

  it.runIf(linux)("sees this process's main thread spin, and a busy core", () => {
    const meter = startCpuMeter({ self: process.pid, gone: 2 ** 22 + 1, none: null });
    const until = performance.now() + 200;
    while (performance.now() < until) {
      // spin: the main thread is on a CPU all along
    }
    const use = meter.stop()!;
    expect(use.wallMs).toBeGreaterThanOrEqual(200);
    // on a busy machine the spin is preempted now and then, but it runs most of the time
    expect(use.processes.self!.mainMs).toBeGreaterThan(100);
    expect(use.processes.self!.mainMs).toBeLessThanOrEqual(use.wallMs + 1);
    expect(use.processes.gone).toBeUndefined();
    expect(use.processes.none).toBeUndefined();
    expect(use.machineBusyCores).toBeGreaterThan(0.3);
    expect(readThreadTimes(process.pid)!.has(process.pid)).toBe(true);
  });
});
