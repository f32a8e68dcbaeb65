import { describe, expect, it } from "vitest";
import { CloseCode } from "./protocol.ts";
import { backoffDelay, planReconnect, RECONNECT_MAX_MS } from "./reconnect.ts";

describe("reconnect planning", () => {
  it("maps close codes to what docs/protocol.md § Close codes asks of a client", () => {
    expect(planReconnect(CloseCode.TOO_SLOW)).toEqual({ action: "now" });
    expect(planReconnect(1006)).toEqual({ action: "backoff" });
    expect(planReconnect(1001)).toEqual({ action: "backoff" });
    expect(planReconnect(CloseCode.NOT_FOUND)).toMatchObject({ action: "stop", reason: "not_found" });
    expect(planReconnect(CloseCode.MOVED, "session moved: chat")).toEqual({ action: "stop", reason: "moved", detail: "session moved: chat" });
    expect(planReconnect(CloseCode.EXITED)).toMatchObject({ action: "stop", reason: "exited" });
  });

  it("backs off exponentially up to a cap", () => {
    const mid = () => 0.5;
    expect(backoffDelay(0, mid)).toBeLessThan(backoffDelay(3, mid));
    expect(backoffDelay(50, () => 1)).toBe(RECONNECT_MAX_MS);
  });
});
