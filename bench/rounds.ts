/**
 * How a benchmark compares arms on a loaded machine: every round runs every arm once, in an order
 * rotated round by round, so no arm always runs first (on a warm cache, after a GC, beside a
 * neighbour's burst); value and baseline are then the arms' medians and the ratio the median of
 * the paired rounds (stats.ts pairedRatio).
 */

/** `count` items in the order of round `index`: rotated by one each round, so no arm always runs first. */
export function rotated<T>(items: readonly T[], index: number): T[] {
  const k = index % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

/** One arm of a comparison and what its runs gave, in round order. */
export type Arm<R> = { run: () => Promise<R>; runs: R[] };

/** Run `rounds` rounds of every arm; `afterRound(i)` is called once round i is complete (to log it). */
export async function runRounds<R>(arms: ReadonlyMap<string, Arm<R>>, rounds: number, afterRound?: (round: number) => void): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    for (const name of rotated([...arms.keys()], i)) {
      const arm = arms.get(name)!;
      arm.runs.push(await arm.run());
    }
    afterRound?.(i);
  }
}
