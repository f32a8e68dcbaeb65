import { decodeServerFrame, type ServerMessage } from "../contract/frames.ts";
import type { TerminalSocket } from "../hub/terminal-connection.ts";

type Unsent = { bytes: number; done: (err?: Error) => void };

/**
 * A terminal connection's socket without a network: every frame sent is kept, decoded with the
 * contract's decoder, and counted in `bufferedAmount` until the test lets the peer read it
 * (`drain`), or at once with `autoDrain`. Closing records the code, as a peer would see it.
 */
export class RecordingSocket implements TerminalSocket {
  bufferedAmount = 0;
  /** every frame sent, as bytes */
  readonly sent: Uint8Array[] = [];
  closeCode: number | null = null;
  closeReason = "";
  terminated = false;
  /** what the handshake negotiated, as ws reports it ("permessage-deflate" for a compressing peer) */
  extensions = "";
  private readonly unsent: Unsent[] = [];
  private readonly listeners = new Map<string, Array<() => void>>();
  private closedEmitted = false;

  /** `autoDrain`: the peer reads every frame right away (in a microtask, as a send callback would run). */
  constructor(private readonly autoDrain = true) {}

  /** The frames sent, decoded (a frame the contract cannot decode fails the test). */
  get frames(): ServerMessage[] {
    return this.sent.map((bytes) => {
      const message = decodeServerFrame(bytes);
      if (message.type === "invalid") throw new Error(`undecodable frame: ${message.detail}`);
      return message;
    });
  }

  types(): string[] {
    return this.frames.map((f) => f.type);
  }

  /** Bytes of the output frames sent, joined. */
  output(from = 0): Buffer {
    return Buffer.concat(
      this.frames.slice(from).flatMap((f) => (f.type === "output" ? [f.data] : [])),
    );
  }

  /** Frames the peer has not read yet. */
  get unsentFrames(): number {
    return this.unsent.length;
  }

  /** The peer reads up to `frames` frames (all by default): their send callbacks run, in order. */
  drain(frames = Infinity): void {
    for (let i = 0; i < frames && this.unsent.length > 0; i++) {
      const next = this.unsent.shift()!;
      this.bufferedAmount -= next.bytes;
      next.done();
    }
  }

  send(frame: Uint8Array, _options: { binary: boolean; compress: boolean }, done: (err?: Error) => void): void {
    if (this.closeCode !== null || this.terminated) {
      queueMicrotask(() => done(new Error("socket closed")));
      return;
    }
    this.sent.push(frame);
    this.bufferedAmount += frame.length;
    this.unsent.push({ bytes: frame.length, done });
    if (this.autoDrain) queueMicrotask(() => this.drain(1));
  }

  close(code: number, reason: string): void {
    if (this.closeCode !== null) return;
    this.closeCode = code;
    this.closeReason = reason;
    queueMicrotask(() => this.emitClose());
  }

  terminate(): void {
    this.terminated = true;
    queueMicrotask(() => this.emitClose());
  }

  /** The peer went away (a network close): what a browser tab closing looks like to the server. */
  dropped(): void {
    this.emitClose();
  }

  on(event: "close" | "error", listener: () => void): this {
    const list = this.listeners.get(event) ?? [];
    list.push(listener);
    this.listeners.set(event, list);
    return this;
  }

  once(event: "close", listener: () => void): this {
    const wrapped = () => {
      const list = this.listeners.get(event) ?? [];
      list.splice(list.indexOf(wrapped), 1);
      listener();
    };
    return this.on(event, wrapped);
  }

  private emitClose(): void {
    if (this.closedEmitted) return;
    this.closedEmitted = true;
    for (const { done } of this.unsent.splice(0)) done(new Error("socket closed"));
    this.bufferedAmount = 0;
    for (const listener of [...(this.listeners.get("close") ?? [])]) listener();
  }
}
