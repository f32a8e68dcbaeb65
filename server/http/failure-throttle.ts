/** Failures from one address before answers start to slow down (typos are free). */
export const FREE_FAILURES = 3;
/** First delay once past the free failures; it doubles with each further failure. */
export const BASE_FAILURE_DELAY_MS = 250;
/** The delay never grows past this, so a user who mistyped can still get in soon. */
export const MAX_FAILURE_DELAY_MS = 10_000;
/** An address's failure count is forgotten after this long without a new failure. */
export const FAILURE_MEMORY_MS = 15 * 60_000;
/** Answers held back at once per address; past this the connection is dropped at once (burst guard). */
export const MAX_DELAYED_PER_ADDRESS = 64;
/** Addresses remembered at once; the oldest are forgotten first. */
export const MAX_TRACKED_ADDRESSES = 10_000;

type Entry = { failures: number; last: number; delayed: number };

/**
 * Slows down credential guessing: each failed attempt from an address makes that address's
 * next failure answer later (exponential, capped). A success clears the address.
 */
export class FailureThrottle {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Record a failure; returns how long to hold the 401 back, or null to drop the connection. */
  fail(address: string): number | null {
    const now = this.now();
    let entry = this.entries.get(address);
    if (!entry || now - entry.last > FAILURE_MEMORY_MS) {
      entry = { failures: 0, last: now, delayed: 0 };
      this.entries.delete(address);
      if (this.entries.size >= MAX_TRACKED_ADDRESSES) {
        const oldest = this.entries.keys().next().value;
        if (oldest !== undefined) this.entries.delete(oldest);
      }
      this.entries.set(address, entry);
    }
    entry.failures++;
    entry.last = now;
    if (entry.delayed >= MAX_DELAYED_PER_ADDRESS) return null;
    return this.delayFor(entry.failures);
  }

  delayFor(failures: number): number {
    if (failures <= FREE_FAILURES) return 0;
    return Math.min(MAX_FAILURE_DELAY_MS, BASE_FAILURE_DELAY_MS * 2 ** (failures - FREE_FAILURES - 1));
  }

  /** Runs `answer` after the address's delay, counting it as held back meanwhile. */
  hold(address: string, delayMs: number, answer: () => void): void {
    const entry = this.entries.get(address);
    if (delayMs <= 0 || !entry) {
      answer();
      return;
    }
    entry.delayed++;
    const timer = setTimeout(() => {
      entry.delayed--;
      answer();
    }, delayMs);
    timer.unref?.();
  }

  succeed(address: string): void {
    this.entries.delete(address);
  }

  failures(address: string): number {
    return this.entries.get(address)?.failures ?? 0;
  }
}
