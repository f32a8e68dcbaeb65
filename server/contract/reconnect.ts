/**
 * What a client does after its socket closed (docs/protocol.md § Close codes): reconnect at once,
 * back off, or stop; and how long each backoff step waits. Shared by the browser's reconnect loop,
 * its session-list and settings sockets, and `webmux attach`. Pure: no node:, Bun or DOM.
 */
import { CloseCode } from "./protocol.ts";

/** What the client should do after its socket closed. */
export type ReconnectPlan =
  | { action: "now" } // 4408: too slow, reconnect at once and resume
  | { action: "backoff" } // network drop, server restart: reconnect with growing delays
  | { action: "stop"; reason: "not_found" | "moved" | "exited" | "unauthorized"; detail: string };

/** First reconnect delay after a network drop. */
export const RECONNECT_BASE_MS = 250;
/** Reconnect delays grow to this and stay there: a phone coming back online reconnects within it. */
export const RECONNECT_MAX_MS = 10_000;

/** Decide what to do after the socket closed with `code`. */
export function planReconnect(code: number, reason = ""): ReconnectPlan {
  switch (code) {
    case CloseCode.TOO_SLOW:
      return { action: "now" };
    case CloseCode.NOT_FOUND:
      return { action: "stop", reason: "not_found", detail: reason || "session not found" };
    case CloseCode.MOVED:
      return { action: "stop", reason: "moved", detail: reason || "session moved" };
    case CloseCode.EXITED:
      return { action: "stop", reason: "exited", detail: reason || "session exited" };
    default:
      return { action: "backoff" };
  }
}

/** Delay before reconnect attempt `attempt` (0-based) after a drop, with jitter so tabs don't stampede. */
export function backoffDelay(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(RECONNECT_MAX_MS, RECONNECT_BASE_MS * 2 ** Math.min(attempt, 16));
  return Math.round(base / 2 + (random() * base) / 2);
}
