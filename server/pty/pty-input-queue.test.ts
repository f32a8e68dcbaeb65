import { constants } from "node:os";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { PTY_WRITE_MAX_BACKOFF_MS, PTY_WRITE_QUICK_RETRIES, PtyInputQueue } from "./pty-input-queue.ts";

const EAGAIN = -constants.errno.EAGAIN;
const EIO = -constants.errno.EIO;

/** A master whose kernel buffer takes `room()` bytes per write, recording what it took. */
function makeMaster(room: () => number) {
  const taken: number[] = [];
  let attempts = 0;
  let open = true;
  const queue = new PtyInputQueue(
    (bytes) => {
      attempts++;
      const n = Math.min(room(), bytes.length);
      if (n <= 0) return EAGAIN;
      taken.push(...bytes.subarray(0, n));
      return n;
    },
    () => open,
  );
  return {
    queue,
    taken: () => Buffer.from(taken),
    attempts: () => attempts,
    close: () => (open = false),
  };
}

describe("PtyInputQueue", () => {
  beforeEach(() => vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setImmediate", "clearImmediate"] }));
  afterEach(() => vi.useRealTimers());

  it("writes a keystroke at once, in the caller's turn, when the kernel takes it", () => {
    const master = makeMaster(() => 1 << 20);
    master.queue.write(Buffer.from("ls\r"));
    expect(master.taken().toString()).toBe("ls\r");
    expect(master.queue.pendingBytes).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("keeps what the kernel refused, in order behind it, as a copy of the caller's bytes", async () => {
    let room = 3;
    const master = makeMaster(() => room);
    const reused = Buffer.from("abcdef");
    master.queue.write(reused);
    reused.fill(0x7a); // the caller's buffer is reused for the next read
    master.queue.write(Buffer.from("ghi"));
    expect(master.taken().toString()).toBe("abc");
    expect(master.queue.pendingBytes).toBe(6);
    let drained = false;
    void master.queue.drained().then(() => (drained = true));
    room = 2; // short writes: each attempt takes two
    await vi.runAllTimersAsync();
    expect(master.taken().toString()).toBe("abcdefghi");
    expect(drained).toBe(true);
  });

  it("backs off while the program reads nothing, instead of spinning, and goes on once it reads", async () => {
    let room = 0;
    const master = makeMaster(() => room);
    master.queue.write(Buffer.alloc(100, 1));
    await vi.advanceTimersByTimeAsync(1_000);
    // A spin would try on every turn; backing off tries a few times, then every PTY_WRITE_MAX_BACKOFF_MS.
    expect(master.attempts()).toBeLessThanOrEqual(1 + PTY_WRITE_QUICK_RETRIES + 10 + 1_000 / PTY_WRITE_MAX_BACKOFF_MS);
    expect(master.attempts()).toBeGreaterThanOrEqual(1_000 / PTY_WRITE_MAX_BACKOFF_MS);
    room = 10;
    await vi.advanceTimersByTimeAsync(PTY_WRITE_MAX_BACKOFF_MS);
    expect(master.taken().length).toBeGreaterThan(0);
    await vi.runAllTimersAsync();
    expect(master.taken()).toEqual(Buffer.alloc(100, 1));
  });

  it("drops what is pending once the descriptor is no longer the terminal's, and never writes to it again", async () => {
    const master = makeMaster(() => 0);
    master.queue.write(Buffer.from("a long paste"));
    const before = master.attempts();
    master.close();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(master.attempts()).toBe(before);
    expect(master.queue.pendingBytes).toBe(0);
    await expect(master.queue.drained()).resolves.toBeUndefined();
    master.queue.write(Buffer.from("more"));
    expect(master.attempts()).toBe(before);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("closes on an error other than EAGAIN (EIO: the program's side is gone) and settles its waiters", async () => {
    let result = EAGAIN;
    let attempts = 0;
    const queue = new PtyInputQueue(
      () => (attempts++, result),
      () => true,
    );
    queue.write(Buffer.from("x"));
    const drained = queue.drained();
    result = EIO;
    await vi.runAllTimersAsync();
    await drained;
    expect(queue.pendingBytes).toBe(0);
    queue.write(Buffer.from("y"));
    expect(attempts).toBe(2);
  });

  it("close() settles a waiting drained() and cancels the retry", async () => {
    const master = makeMaster(() => 0);
    master.queue.write(Buffer.from("pending"));
    const drained = master.queue.drained();
    master.queue.close();
    await drained;
    expect(vi.getTimerCount()).toBe(0);
  });
});
