import { describe, expect, it } from "vitest";
import { ControllerLease, MAX_CLIENT_OWNERS, type LeaseConnection } from "./controller-lease.ts";

let nextId = 1;
const conn = (clientId: string, canControl = true): LeaseConnection => ({ id: nextId++, clientId, label: `${clientId}-label`, canControl });

describe("ControllerLease", () => {
  it("seats the first client to attach; a second client is an observer until it claims", () => {
    const lease = new ControllerLease(() => 1000);
    const a = conn("client-a");
    const b = conn("client-b");
    expect(lease.attach(a)).toEqual({ broadcast: true, solo: null });
    expect(lease.info).toEqual({ clientId: "client-a", label: "client-a-label", since: 1000 });
    expect(lease.attach(b)).toEqual({ broadcast: false, solo: null });
    expect(lease.mayResize(b)).toBe(false);
    expect(lease.mayAutoReply(b)).toBe(false);
    expect(lease.claim(b)).toEqual({ broadcast: true, solo: null });
    expect(lease.info?.clientId).toBe("client-b");
    expect(lease.mayResize(a)).toBe(false);
    expect(lease.mayResize(b)).toBe(true);
  });

  it("makes the newest connection of the controlling client effective and hands over to its sibling", () => {
    const lease = new ControllerLease();
    const a1 = conn("client-a");
    const a2 = conn("client-a");
    lease.attach(a1);
    lease.attach(a2);
    expect(lease.effectiveConnection).toBe(a2);
    expect(lease.mayResize(a1)).toBe(false);
    expect(lease.detach(a2)).toEqual({ broadcast: false, solo: a1 });
    expect(lease.effectiveConnection).toBe(a1);
    expect(lease.info?.clientId).toBe("client-a");
  });

  it("input from a non-effective sibling makes it effective with a solo 0x06", () => {
    const lease = new ControllerLease();
    const a1 = conn("client-a");
    const a2 = conn("client-a");
    lease.attach(a1);
    lease.attach(a2);
    expect(lease.claim(a1)).toEqual({ broadcast: false, solo: a1 });
    expect(lease.claim(a1)).toEqual({ broadcast: false, solo: null });
  });

  it("leaves the seat empty when the controller's last connection leaves, and the next attach takes it", () => {
    const lease = new ControllerLease();
    const a = conn("client-a");
    const b = conn("client-b");
    lease.attach(a);
    lease.attach(b);
    expect(lease.detach(a)).toEqual({ broadcast: true, solo: null });
    expect(lease.info).toBeNull();
    expect(lease.mayResize(b)).toBe(false);
    // with no controller, auto-replies come from the earliest attached writer
    expect(lease.mayAutoReply(b)).toBe(true);
    const c = conn("client-c");
    expect(lease.attach(c)).toEqual({ broadcast: true, solo: null });
    expect(lease.info?.clientId).toBe("client-c");
  });

  it("keeps control for the same client reconnecting", () => {
    const lease = new ControllerLease();
    const a1 = conn("client-a");
    lease.attach(a1);
    const b = conn("client-b");
    lease.attach(b);
    const a2 = conn("client-a");
    lease.attach(a2);
    lease.detach(a1);
    expect(lease.info?.clientId).toBe("client-a");
    expect(lease.effectiveConnection).toBe(a2);
  });

  it("never seats a read-only connection", () => {
    const lease = new ControllerLease();
    const reader = conn("reader-1", false);
    expect(lease.attach(reader)).toEqual({ broadcast: false, solo: null });
    expect(lease.info).toBeNull();
    expect(lease.claim(reader)).toBeNull();
    expect(lease.mayAutoReply(reader)).toBe(false);
    const writer = conn("writer-1");
    lease.attach(writer);
    expect(lease.info?.clientId).toBe("writer-1");
  });

  it("never makes a read-only connection the heir of its client's seat: the seat empties instead", () => {
    const lease = new ControllerLease();
    const owner = conn("client-a");
    const copycat = conn("client-a", false);
    lease.attach(owner);
    expect(lease.attach(copycat)).toEqual({ broadcast: false, solo: null });
    expect(lease.effectiveConnection).toBe(owner);
    expect(lease.detach(owner)).toEqual({ broadcast: true, solo: null });
    expect(lease.info).toBeNull();
    expect(lease.effectiveConnection).toBeNull();
    expect(lease.mayResize(copycat)).toBe(false);
    expect(lease.mayAutoReply(copycat)).toBe(false);
    // a sibling that may control is still the heir, skipping a newer read-only one
    const a1 = conn("client-b");
    const a2 = conn("client-b");
    const ro = conn("client-b", false);
    lease.attach(a1);
    lease.attach(a2);
    lease.attach(ro);
    expect(lease.detach(a2)).toEqual({ broadcast: false, solo: a1 });
    expect(lease.effectiveConnection).toBe(a1);
  });

  it("binds a client ID to the principal that first used it, forgetting only IDs with no connection", () => {
    const lease = new ControllerLease();
    expect(lease.bindClientId("tab-1", "global:global")).toBe(true);
    expect(lease.bindClientId("tab-1", "global:global")).toBe(true);
    expect(lease.bindClientId("tab-1", "agent:tok1")).toBe(false);
    const attached = conn("tab-1");
    lease.attach(attached);
    for (let i = 0; i < MAX_CLIENT_OWNERS; i++) expect(lease.bindClientId(`other-${i}`, "agent:tok1")).toBe(true);
    // tab-1 is attached, so the oldest unattached ID was forgotten instead
    expect(lease.bindClientId("tab-1", "agent:tok1")).toBe(false);
    expect(lease.bindClientId("other-0", "agent:tok2")).toBe(true);
    lease.detach(attached);
  });
});
