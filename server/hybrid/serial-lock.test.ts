import { describe, expect, it } from "vitest";
import { SerialLock } from "./serial-lock.ts";

describe("SerialLock", () => {
  it("runs steps one at a time in the order asked, even when earlier ones fail", async () => {
    const lock = new SerialLock();
    const log: string[] = [];
    let releaseFirst!: () => void;
    const first = lock.run(async () => {
      log.push("first start");
      await new Promise<void>((r) => (releaseFirst = r));
      log.push("first end");
      throw new Error("first failed");
    });
    const second = lock.run(() => {
      log.push("second");
      return 2;
    });
    expect(lock.busy).toBe(true);
    await Promise.resolve();
    expect(log).toEqual(["first start"]);
    releaseFirst();
    await expect(first).rejects.toThrow("first failed");
    await expect(second).resolves.toBe(2);
    expect(log).toEqual(["first start", "first end", "second"]);
    await lock.settled();
    expect(lock.busy).toBe(false);
  });
});
