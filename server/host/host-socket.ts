/**
 * One end of a host connection: frames in (cut, decoded once), frames out. A small frame that is
 * the first of its turn (a keystroke, an echo, a prompt) is copied into one buffer and written at
 * once: one system call, nothing deferred. Once a turn has written, or for a large frame, the
 * socket is corked until the next tick, so a flush of many sessions' output or a large read and
 * its header still leave in one system call, and the payload is not copied (docs/design.md § Performance).
 */
import type { Socket } from "node:net";
import { Emitter } from "../session/emitter.ts";
import { readIntoOwnBuffer } from "../pty/own-read-buffer.ts";
import { sendUnqueued, type UnqueuedSocket } from "../hub/unqueued-send.ts";
import { decodeHostFrame, encodeHostFrameParts, HostFrameReader, LentHostFrameReader, MAX_HOST_FRAME_BYTES, type HostMessage } from "./protocol.ts";

/**
 * A frame up to this size (an echo, a prompt, a line) is copied into one buffer and written at once
 * when nothing of its turn waits before it. Larger ones (a PTY read of a flood is ~4 KiB) keep
 * the corked two-part write: no copy, no buffer allocated per frame.
 */
export const SINGLE_WRITE_MAX_BYTES = 1024;

export type HostSocketOptions = {
  /**
   * The socket reads into one buffer of its own and OUTPUT messages are lent: their `data` is
   * valid only while the `message` listeners run (a listener that keeps bytes copies them; the
   * server's mirror copies them into its ring anyway). Every other message is the listeners' to keep.
   */
  lendOutput?: boolean;
};

export type HostSocketEvents = {
  /** with `lendOutput`, an OUTPUT message's data is lent (HostSocketOptions) */
  message: [message: HostMessage];
  /** a frame that could not be read, or a length over the limit: the socket is closed after it */
  invalid: [reason: string];
  /** the socket closed (either side, or an error); emitted once */
  closed: [];
};

export class HostSocket {
  readonly events = new Emitter<HostSocketEvents>();
  private readonly reader: HostFrameReader | LentHostFrameReader;
  private corked = false;
  private closed = false;

  constructor(
    readonly socket: Socket,
    frameLimit?: number,
    options: HostSocketOptions = {},
  ) {
    const lent = options.lendOutput === true && readIntoOwnBuffer(socket, (chunk) => this.receiveLent(chunk), true);
    if (lent) {
      this.reader = new LentHostFrameReader(frameLimit);
      // What the stream read before its own buffer was in place still comes as 'data'.
      socket.on("data", (chunk: Buffer) => this.receiveLent(chunk));
    } else {
      this.reader = new HostFrameReader(frameLimit);
      socket.on("data", (chunk: Buffer) => this.receive(chunk));
    }
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
    const parts = encodeHostFrameParts(message);
    if (!this.corked && this.socket.writableLength === 0) {
      const length = parts.length === 1 ? parts[0]!.length : parts[0]!.length + parts[1]!.length;
      if (parts.length <= 2 && length <= SINGLE_WRITE_MAX_BYTES) {
        this.socket.write(parts.length === 1 ? parts[0]! : joined(parts[0]!, parts[1]!, length));
        // The rest of this turn's frames wait for the tick, to leave together in one system call.
        this.cork();
        return;
      }
    }
    this.cork();
    for (const part of parts) this.socket.write(part);
  }

  /**
   * A frame already in parts (encodeOutputFrameParts) whose memory is written over once this
   * returns (views of a run's ring): what the kernel takes at once is sent from the parts
   * themselves, and only the rest is copied, to wait in the socket's queue after this turn's
   * other frames (docs/design.md § The session host serves the streams).
   */
  sendTransient(frameParts: readonly Uint8Array[]): void {
    if (this.closed) return;
    // A small frame (an echo's header and bytes) is one buffer: one system call, not one per part.
    let parts = frameParts;
    if (parts.length > 1) {
      let length = 0;
      for (const part of parts) length += part.length;
      if (length <= SINGLE_WRITE_MAX_BYTES) parts = [Buffer.concat(parts, length)];
    }
    let index = 0;
    let taken = 0;
    for (; index < parts.length; index++) {
      taken = sendUnqueued(this.socket as UnqueuedSocket, parts[index]!);
      if (taken < parts[index]!.length) break;
    }
    if (index === parts.length) return;
    this.cork();
    this.socket.write(Buffer.concat([parts[index]!.subarray(taken), ...parts.slice(index + 1)]));
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
    for (const frame of (this.reader as HostFrameReader).push(chunk)) {
      if (!this.dispatch(frame, false)) return;
    }
    this.checkLimit();
  }

  /** A read lent by the socket (or a chunk its stream had buffered): frames are handled before it returns. */
  private receiveLent(chunk: Uint8Array): void {
    (this.reader as LentHostFrameReader).push(chunk, (frame) => this.dispatch(frame, true));
    this.checkLimit();
  }

  /** Decode and emit one frame; false once the socket is closed (a bad frame closes it). */
  private dispatch(frame: Uint8Array, lent: boolean): boolean {
    if (this.closed) return false;
    const message = decodeHostFrame(frame);
    if (message.type === "invalid") {
      this.events.emit("invalid", message.reason);
      this.destroy();
      return false;
    }
    // Only OUTPUT is lent on; the rest of a lent frame's bytes are copied for whoever keeps them.
    // (A copy: the lent bytes are a Buffer, whose `slice` is a view.)
    if (lent && message.type !== "output" && "data" in message) message.data = new Uint8Array(message.data);
    this.events.emit("message", message);
    return !this.closed;
  }

  private checkLimit(): void {
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

function joined(head: Uint8Array, tail: Uint8Array, length: number): Buffer {
  const out = Buffer.allocUnsafe(length);
  out.set(head, 0);
  out.set(tail, head.length);
  return out;
}
