/**
 * The client side of /ws/s/{id}, shared by the browser and the native CLI: what a client must
 * remember to resume at the exact byte it stopped at, and what each close code asks of it.
 * Pure: it sees decoded messages and close codes, never a socket.
 */

import type { ServerMessage } from "./frames.ts";
import { CloseCode } from "./protocol.ts";
import type { ControlPayload, PositionPayload, SessionInfo } from "./types.ts";

/** What the client should do after its socket closed. */
export type ReconnectPlan =
  | { action: "now" } // 4408: too slow, reconnect at once and resume
  | { action: "backoff" } // network drop, server restart: reconnect with growing delays
  | { action: "stop"; reason: "not_found" | "moved" | "exited" | "unauthorized"; detail: string };

/** First reconnect delay after a network drop. */
export const RECONNECT_BASE_MS = 250;
/** Reconnect delays grow to this and stay there: a phone coming back online reconnects within it. */
export const RECONNECT_MAX_MS = 10_000;

export type ResumePoint = { generation: string; offset: number };

/**
 * Tracks (generation, offset) by the rule of docs/protocol.md § Resume: append, reset, truncated.
 * After a position frame, every 0x00 byte adds to the offset; a reset snapshot puts it at `end`,
 * an append continues from `start`.
 */
export class StreamTracker {
  generation: string | null = null;
  offset = 0;
  control: ControlPayload | null = null;
  session: SessionInfo | null = null;
  exitCode: number | null = null;
  /** the last position frame, until the replay it announces is complete */
  position: PositionPayload | null = null;
  /** true between a position frame and the status frame that ends its replay */
  replaying = false;

  constructor(resume: ResumePoint | null = null) {
    if (resume) {
      this.generation = resume.generation;
      this.offset = resume.offset;
    }
  }

  /** The resume point to send on the next connect, if there is one. */
  resumePoint(): ResumePoint | null {
    return this.generation === null ? null : { generation: this.generation, offset: this.offset };
  }

  /** Feed every server message in order. */
  observe(message: ServerMessage): void {
    switch (message.type) {
      case "position":
        this.position = message.position;
        this.generation = message.position.generation;
        this.offset = message.position.mode === "append" ? message.position.start : message.position.end;
        this.replaying = true;
        break;
      case "output":
        this.offset += message.data.length;
        break;
      case "status":
        this.session = message.session;
        this.replaying = false;
        break;
      case "control":
        this.control = message.control;
        break;
      case "exit":
        this.exitCode = message.exitCode;
        break;
      default:
        break;
    }
  }

  /** Decide what to do after the socket closed with `code`. */
  static planReconnect(code: number, reason = ""): ReconnectPlan {
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
  static backoffDelay(attempt: number, random: () => number = Math.random): number {
    const base = Math.min(RECONNECT_MAX_MS, RECONNECT_BASE_MS * 2 ** Math.min(attempt, 16));
    return Math.round(base / 2 + (random() * base) / 2);
  }
}
