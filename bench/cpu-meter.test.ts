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
    // Spin until the kernel has counted 100 ms of CPU on this thread (on a busy machine that takes
    // longer than 100 ms of wall time), within a generous deadline.
    const SPUN_NS = 100e6;
    const start = readThreadTimes(process.pid)!.get(process.pid)!;
    const deadline = performance.now() + 20_000;
    while (readThreadTimes(process.pid)!.get(process.pid)! - start < SPUN_NS) {
      if (performance.now() > deadline) throw new Error("the main thread never got 100 ms of CPU");
    }
    const use = meter.stop()!;
    expect(use.wallMs).toBeGreaterThanOrEqual(100);
    // The kernel's per-thread figure of a running thread lags by up to a tick: half is a clear margin.
    expect(use.processes.self!.mainMs).toBeGreaterThanOrEqual(50);
    expect(use.processes.self!.mainMs).toBeLessThanOrEqual(use.wallMs + 1);
    expect(use.processes.gone).toBeUndefined();
    expect(use.processes.none).toBeUndefined();
    expect(use.machineBusyCores).toBeGreaterThan(0.3);
    expect(readThreadTimes(process.pid)!.has(process.pid)).toBe(true);
  });
});
