import { describe, expect, it } from "vitest";
import { median, pairedRatio, quantile } from "./stats.ts";

describe("bench statistics", () => {
  it("median and nearest-rank quantiles", () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(quantile(Array.from({ length: 1000 }, (_, i) => i + 1), 0.99)).toBe(990);
  });

  it("pairedRatio is the median of the rounds' ratios, which drift across rounds does not move", () => {
    // The machine speeds up round by round; every round the arm runs at 0.9 of its baseline.
    const baselines = [40, 60, 80];
    const values = [36, 54, 72];
    expect(pairedRatio(values, baselines)).toBeCloseTo(0.9, 10);
    // One slow round of the arm (a neighbour's load) pairs with the baseline of its own round.
    const warmedUp = [30, 54, 72, 80, 82];
    const warmedBaselines = [40, 60, 80, 88, 90];
    expect(pairedRatio(warmedUp, warmedBaselines)).toBeCloseTo(0.9, 1);
    expect(() => pairedRatio([1], [1, 2])).toThrow(/unequal/);
  });
});
