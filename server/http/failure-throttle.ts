/**
 * Slows down credential guessing (docs/design.md, Authentication and credentials). Failures are
 * counted per kind of credential and per address group; past the free ones a group's next guess
 * of that kind is not even checked until its delay has passed — it is answered 429 at once — so
 * however many guesses arrive at once, one is checked per delay. A success resets nothing: the
 * server cannot tell which credential a failure was guessing at, and a success with one credential
 * (a read-only agent token) must not buy more guesses at another (the global token).
 */
import { connectionAddress } from "../hub/connection-limit.ts";

/** What was presented: a token (Bearer, login form, login link), the login cookie, a hybrid session's hook secret. */
export type CredentialKind = "token" | "cookie" | "hook";

/** Failures of one kind from one address group before checks start to be spaced out (typos are free). */
export const FREE_FAILURES = 3;
/** First wait once past the free failures; it doubles with each further failure. */
export const BASE_FAILURE_DELAY_MS = 250;
/** The wait never grows past this, so a user who mistyped can still get in soon. */
export const MAX_FAILURE_DELAY_MS = 10_000;
/** A group's failure count is forgotten after this long without a new failure. */
export const FAILURE_MEMORY_MS = 15 * 60_000;
/** Groups remembered at once; the oldest are forgotten first. */
export const MAX_TRACKED_GROUPS = 10_000;
/** The global ceiling is counted over windows of this length. */
export const GLOBAL_FAILURE_WINDOW_MS = 60_000;
/**
 * Failures from every address together per window before only groups with no failure yet are
 * checked: guesses spread over many addresses cannot multiply the rate past it, while a user
 * who has not failed is never shut out by someone else's guessing.
 */
export const GLOBAL_MAX_FAILURES_PER_WINDOW = 100;

type Entry = { failures: number; last: number };

/**
 * The group an address's failures are counted against: an IPv4 address alone (a dual-stack
 * `::ffff:` form as its IPv4), an IPv6 address by its /64 — the block one host or one user gets,
 * within which changing addresses is free.
 */
export function failureGroup(remoteAddress: string | undefined): string {
  const address = connectionAddress(remoteAddress);
  if (!address.includes(":")) return address;
  const bare = address.split("%")[0]!.toLowerCase();
  const [head, tail = ""] = bare.split("::") as [string, string?];
  const headParts = head === "" ? [] : head.split(":");
  const tailParts = bare.includes("::") ? (tail === "" ? [] : tail.split(":")) : [];
  const groups = bare.includes("::") ? [...headParts, ...Array(Math.max(0, 8 - headParts.length - tailParts.length)).fill("0"), ...tailParts] : headParts;
  return `${groups
    .slice(0, 4)
    .map((g) => (/^[0-9a-f]{1,4}$/.test(g) ? g.replace(/^0+(?=.)/, "") : "?"))
    .join(":")}::/64`;
}

export class FailureThrottle {
  private readonly entries = new Map<string, Entry>();
  private windowStart = 0;
  private windowFailures = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * Whether a credential of `kind` from `address` may be checked now: null if so, else the ms to
   * wait (answer 429 without checking it). Call it right before the check, in the same step.
   */
  wait(kind: CredentialKind, address: string | undefined): number | null {
    const now = this.now();
    const entry = this.entry(kind, address, now);
    if (!entry) return null;
    const own = entry.last + this.delayFor(entry.failures) - now;
    if (own > 0) return own;
    if (this.globalFailures(now) >= GLOBAL_MAX_FAILURES_PER_WINDOW) return this.windowStart + GLOBAL_FAILURE_WINDOW_MS - now;
    return null;
  }

  /** Count a failed check of a credential of `kind` from `address`. */
  fail(kind: CredentialKind, address: string | undefined): void {
    const now = this.now();
    const key = `${kind} ${failureGroup(address)}`;
    let entry = this.entry(kind, address, now);
    if (!entry) {
      if (this.entries.size >= MAX_TRACKED_GROUPS) {
        const oldest = this.entries.keys().next().value;
        if (oldest !== undefined) this.entries.delete(oldest);
      }
      entry = { failures: 0, last: now };
    }
    this.entries.delete(key);
    this.entries.set(key, entry); // most recent last, so the oldest is forgotten first
    entry.failures++;
    entry.last = now;
    this.globalFailures(now);
    this.windowFailures++;
  }

  /** How long a group waits after its `failures`-th failure before its next check. */
  delayFor(failures: number): number {
    if (failures <= FREE_FAILURES) return 0;
    return Math.min(MAX_FAILURE_DELAY_MS, BASE_FAILURE_DELAY_MS * 2 ** (failures - FREE_FAILURES - 1));
  }

  failures(kind: CredentialKind, address: string | undefined): number {
    return this.entry(kind, address, this.now())?.failures ?? 0;
  }

  private entry(kind: CredentialKind, address: string | undefined, now: number): Entry | null {
    const key = `${kind} ${failureGroup(address)}`;
    const entry = this.entries.get(key);
    if (!entry) return null;
    if (now - entry.last > FAILURE_MEMORY_MS) {
      this.entries.delete(key);
      return null;
    }
    return entry;
  }

  private globalFailures(now: number): number {
    if (now - this.windowStart >= GLOBAL_FAILURE_WINDOW_MS) {
      this.windowStart = now;
      this.windowFailures = 0;
    }
    return this.windowFailures;
  }
}
