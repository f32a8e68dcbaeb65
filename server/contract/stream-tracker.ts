/**
 * The client side of /ws/s/{id}, shared by the browser and the native CLI: what a client must
 * remember to resume at the exact byte it stopped at (what each close code asks of it is in
 * reconnect.ts). Pure: it sees decoded messages, never a socket.
 */

import type { ServerMessage } from "./frames.ts";
import type { ControlPayload, PositionPayload, SessionInfo } from "./types.ts";
import { unreachable } from "./unreachable.ts";

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
      case "snapshot":
      case "submitStatus":
        break; // neither moves the resume point
      default:
        unreachable(message, "server message");
    }
  }
}
