import { describe, expect, it } from "vitest";
import { BASE_FAILURE_DELAY_MS, FailureThrottle, failureGroup, FREE_FAILURES, GLOBAL_FAILURE_WINDOW_MS, GLOBAL_MAX_FAILURES_PER_WINDOW, MAX_FAILURE_DELAY_MS } from "./failure-throttle.ts";

function failTimes(throttle: FailureThrottle, address: string, times: number, kind: "token" | "hook" = "token"): void {
  for (let i = 0; i < times; i++) throttle.fail(kind, address);
}

describe("failureGroup", () => {
  it("groups IPv6 addresses by /64, however they are written, and keeps IPv4 (dual-stack too) as it is", () => {
    expect(failureGroup("2001:db8:1:2:aaaa::1")).toBe("2001:db8:1:2::/64");
    expect(failureGroup("2001:0db8:0001:0002:ffff:ffff:ffff:ffff")).toBe("2001:db8:1:2::/64");
    expect(failureGroup("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(failureGroup("2001:db8:0:0:1::")).toBe("2001:db8:0:0::/64");
    expect(failureGroup("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
    expect(failureGroup("::1")).toBe("0:0:0:0::/64");
    expect(failureGroup("2001:db8:1:3::1")).not.toBe(failureGroup("2001:db8:1:2::1"));
    expect(failureGroup("::ffff:192.0.2.7")).toBe("192.0.2.7");
    expect(failureGroup("192.0.2.7")).toBe("192.0.2.7");
    expect(failureGroup(undefined)).toBe("unknown");
  });
});

describe("FailureThrottle", () => {
  it("lets the free failures and one more be checked, then spaces checks out, doubling up to the cap", () => {
    let now = 1_000_000;
    const throttle = new FailureThrottle(() => now);
    failTimes(throttle, "192.0.2.1", FREE_FAILURES);
    expect(throttle.wait("token", "192.0.2.1")).toBeNull();
    throttle.fail("token", "192.0.2.1");
    expect(throttle.wait("token", "192.0.2.1")).toBe(BASE_FAILURE_DELAY_MS);
    now += BASE_FAILURE_DELAY_MS;
    expect(throttle.wait("token", "192.0.2.1")).toBeNull();
    throttle.fail("token", "192.0.2.1");
    expect(throttle.wait("token", "192.0.2.1")).toBe(2 * BASE_FAILURE_DELAY_MS);
    failTimes(throttle, "192.0.2.1", 20);
    expect(throttle.wait("token", "192.0.2.1")).toBe(MAX_FAILURE_DELAY_MS);
  });

  it("counts each kind of credential apart, and an IPv6 /64 as one address", () => {
    const now = 1_000_000;
    const throttle = new FailureThrottle(() => now);
    failTimes(throttle, "2001:db8:1:2::1", 2);
    failTimes(throttle, "2001:db8:1:2:ffff::9", 2);
    expect(throttle.wait("token", "2001:db8:1:2::77")).toBe(BASE_FAILURE_DELAY_MS);
    expect(throttle.wait("hook", "2001:db8:1:2::77")).toBeNull();
    expect(throttle.wait("cookie", "2001:db8:1:2::77")).toBeNull();
    expect(throttle.wait("token", "2001:db8:1:3::1")).toBeNull();
  });

  it("past the global ceiling checks only groups that have not failed yet, until the window turns", () => {
    let now = 1_000_000;
    const throttle = new FailureThrottle(() => now);
    for (let i = 0; i < GLOBAL_MAX_FAILURES_PER_WINDOW; i++) throttle.fail("token", `2001:db8:${i.toString(16)}::1`);
    // Each group has failed once only (free), yet together they reached the ceiling.
    expect(throttle.wait("token", "2001:db8:0::1")).toBe(GLOBAL_FAILURE_WINDOW_MS);
    expect(throttle.wait("token", "198.51.100.1")).toBeNull(); // a user who has not failed is still checked
    now += GLOBAL_FAILURE_WINDOW_MS;
    expect(throttle.wait("token", "2001:db8:0::1")).toBeNull();
  });

  it("forgets a group's failures after a quiet while, never on a success", () => {
    let now = 1_000_000;
    const throttle = new FailureThrottle(() => now);
    failTimes(throttle, "192.0.2.9", FREE_FAILURES + 1);
    expect(throttle.failures("token", "192.0.2.9")).toBe(FREE_FAILURES + 1);
    now += 16 * 60_000;
    expect(throttle.failures("token", "192.0.2.9")).toBe(0);
    expect(throttle.wait("token", "192.0.2.9")).toBeNull();
  });
});
