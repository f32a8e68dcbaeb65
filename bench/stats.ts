/** Small statistics over samples, and byte/size conversions used across the benchmarks. */

export const MIB = 1024 * 1024;

/** The q-quantile (0..1) by nearest rank, so p99 of 1000 samples is the 990th smallest. */
export function quantile(samples: readonly number[], q: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)));
  return sorted[rank - 1]!;
}

export function median(samples: readonly number[]): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * The median of per-round ratios `values[i] / baselines[i]` of arms that alternate round by
 * round. A ratio of the two medians lets drift in the machine's speed across the rounds (warm-up,
 * a neighbour's load) pair one arm's slow round with the other's fast one; a round's two runs
 * sit side by side in time, so their ratio cancels the drift.
 */
export function pairedRatio(values: readonly number[], baselines: readonly number[]): number {
  if (values.length !== baselines.length) throw new Error("pairedRatio: arms of unequal length");
  return median(values.map((v, i) => v / baselines[i]!));
}

/** Rounded for reports: enough digits to compare, not so many that the JSON lies about precision. */
export function round(n: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

/** Throughput in MB/s (10^6 bytes per second, the unit the issues quote). */
export function megabytesPerSecond(bytes: number, ms: number): number {
  return bytes / 1e6 / (ms / 1000);
}
