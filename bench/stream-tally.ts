/**
 * What a benchmark client of `/ws/s/{id}` counts, whatever reads its bytes: bench/terminal-client.ts
 * (messages from `ws`) and bench/stream-counter.ts (frames parsed straight off the socket's chunks)
 * both extend it, so the resume point and the counters follow the attach order (control, position,
 * snapshot or output, status, exit) in one place.
 */
import { performance } from "node:perf_hooks";
import type { FrameError, PositionPayload, ServerMessage } from "../server/contract/index.ts";

export class StreamTally {
  position: PositionPayload | null = null;
  /** The resume point: bytes of this generation the client has (snapshot or output) up to. */
  offset = 0;
  /** 0x00 payload bytes since the position frame */
  outputBytes = 0;
  /** 0x00 frames since the position frame */
  outputFrames = 0;
  /** every WebSocket message's length (opcode byte + payload) */
  messageBytes = 0;
  snapshots = 0;
  /** 0x02 frames since the position frame (one ends the attach sequence) */
  statusFrames = 0;
  exitCode: number | null = null;
  /** the server's close code, once its close frame (or the end of the connection) arrived */
  closeCode: number | null = null;
  /** performance.now() of the last 0x00 payload bytes */
  lastOutputAt = 0;
  /** performance.now() of the exit frame */
  exitAt = 0;
  /** why frames were refused (protocol errors, undecodable JSON, unknown opcodes) */
  readonly invalidFrames: string[] = [];

  /** `requestedOffset`: the offset asked for on connect, which an `append` position continues from. */
  constructor(private requestedOffset: number | null = null) {}

  get generation(): string | null {
    return this.position?.generation ?? null;
  }

  get closed(): boolean {
    return this.closeCode !== null;
  }

  /** Output payload bytes arrived (a whole 0x00 frame's, or a piece of one). */
  protected countOutput(length: number): void {
    this.outputBytes += length;
    this.offset += length;
    this.lastOutputAt = performance.now();
  }

  /** Any frame but output, decoded by the contract's codec. */
  protected countMessage(message: ServerMessage | FrameError): void {
    switch (message.type) {
      case "position":
        this.position = message.position;
        this.outputBytes = 0;
        this.outputFrames = 0;
        this.statusFrames = 0;
        this.offset = message.position.mode === "append" && this.requestedOffset !== null ? this.requestedOffset : message.position.end;
        this.requestedOffset = null;
        break;
      case "snapshot":
        this.snapshots++;
        break;
      case "status":
        this.statusFrames++;
        break;
      case "exit":
        this.exitCode = message.exitCode;
        this.exitAt = performance.now();
        break;
      case "invalid":
        this.invalidFrames.push(message.detail);
        break;
      default:
        break;
    }
  }
}
