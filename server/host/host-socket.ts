/**
 * One end of a host connection: frames in (cut, decoded once), frames out. Writes made in one turn
 * of the event loop leave in one system call (the socket is corked until the next tick), so a
 * flush of many sessions' output or a keystroke and its bookkeeping cost one write, not several.
 */
import type { Socket } from "node:net";
import { Emitter } from "../session/emitter.ts";
import { decodeHostFrame, encodeHostFrameParts, HostFrameReader, MAX_HOST_FRAME_BYTES, type HostMessage } from "./protocol.ts";

export type HostSocketEvents = {
  message: [message: HostMessage];
  /** a frame that could not be read, or a length over the limit: the socket is closed after it */
  invalid: [reason: string];
  /** the socket closed (either side, or an error); emitted once */
  closed: [];
};

export class HostSocket {
  readonly events = new Emitter<HostSocketEvents>();
  private readonly reader: HostFrameReader;
  private corked = false;
  private closed = false;

  constructor(
    readonly socket: Socket,
    frameLimit?: number,
  ) {
    this.reader = new HostFrameReader(frameLimit);
    socket.on("data", (chunk: Buffer) => this.receive(chunk));
    const gone = () => this.gone();
    socket.on("close", gone);
    socket.on("error", gone);
    socket.on("end", () => socket.end());
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  /** Bytes handed to the socket that the kernel has not taken yet. */
  get queuedBytes(): number {
    return this.socket.writableLength;
  }

  /** Accept full-size frames from now on (after the hello). */
  trust(): void {
    this.reader.setLimit(MAX_HOST_FRAME_BYTES);
  }

  send(message: HostMessage): void {
    if (this.closed) return;
    this.cork();
    for (const part of encodeHostFrameParts(message)) this.socket.write(part);
  }

  /** End the connection after what was sent has been written. */
  end(): void {
    if (this.closed) return;
    this.socket.end();
  }

  destroy(): void {
    this.socket.destroy();
    this.gone();
  }

  private cork(): void {
    if (this.corked || typeof this.socket.cork !== "function") return;
    this.corked = true;
    this.socket.cork();
    process.nextTick(() => {
      this.corked = false;
      this.socket.uncork();
    });
  }

  private receive(chunk: Buffer): void {
    for (const frame of this.reader.push(chunk)) {
      if (this.closed) return;
      const message = decodeHostFrame(frame);
      if (message.type === "invalid") {
        this.events.emit("invalid", message.reason);
        this.destroy();
        return;
      }
      this.events.emit("message", message);
    }
    if (this.reader.overLimit && !this.closed) {
      this.events.emit("invalid", "frame over the size limit");
      this.destroy();
    }
  }

  private gone(): void {
    if (this.closed) return;
    this.closed = true;
    this.events.emit("closed");
  }
}
