import { COMPRESSION_THRESHOLD_BYTES } from "../contract/protocol.ts";
import type { LeaseConnection } from "../session/controller-lease.ts";
import { closeSocket, type ClosableSocket } from "./close-socket.ts";
import { sendSmallFrameDirect } from "./small-frame.ts";

import { SEND_QUEUE_LIMIT_BYTES, WRITE_DRAIN_TIMEOUT_MS } from "./flow-control.ts";

/** After a close frame is queued, a peer that never reads it is dropped after this long. */
export const CLOSE_GRACE_MS = 30_000;

let nextConnectionId = 1;

/**
 * The part of a WebSocket a terminal connection uses: ws's WebSocket is one, and a unit test's
 * recording socket can be one without a server.
 */
export type TerminalSocket = ClosableSocket & {
  /** bytes accepted by `send` that the peer has not taken yet */
  readonly bufferedAmount: number;
  /** `done` runs once the frame is written (or with an error when it never will be) */
  send(frame: Uint8Array, options: { binary: boolean; compress: boolean }, done: (err?: Error) => void): void;
  on(event: "close" | "error", listener: () => void): unknown;
  /** the extensions negotiated in the handshake, comma-separated (ws); absent: none */
  readonly extensions?: string;
};

export type ConnectionHooks = {
  /** bytes drained from the socket (called from ws send callbacks) */
  onDrain(conn: TerminalConnection): void;
  /** the connection must leave the stream (closed by either side) */
  onGone(conn: TerminalConnection): void;
};

/**
 * One WebSocket attached to one session: an ordered outbox that can be held while a snapshot is
 * prepared, and the accounting that decides when a consumer is too slow.
 */
export class TerminalConnection implements LeaseConnection {
  readonly id = nextConnectionId++;
  readonly attachedAt = Date.now();
  /** frames waiting for a snapshot to be ready; null when frames go straight out */
  private held: Uint8Array[] | null = null;
  private heldBytes = 0;
  private closed = false;
  /** frames handed to the socket, and how many of them it has finished writing */
  private framesWritten = 0;
  private framesSent = 0;
  /** callbacks waiting for the socket to finish writing frame number `after` */
  private sentWaiters: { after: number; run: () => void }[] = [];
  /** when queued bytes last made progress (or the queue last became non-empty) */
  lastProgressAt = Date.now();
  /** bumped on every replay, so a snapshot prepared for an older one is discarded */
  replayEpoch = 0;
  /** a replay is being prepared or its frames are still queued (docs/design.md, Back-pressure) */
  replaying = false;
  /** a resync arrived while `replaying`: one more replay follows it, however many arrived */
  resyncWanted = false;
  /** the client sends 0x07 once it has parsed each replay (`replayAck=1`) */
  acksReplays = false;
  /** replays the client said it has parsed (0x07), never more than were sent */
  private replaysParsed = 0;
  bytesSent = 0;
  /** the socket negotiated permessage-deflate: its frames are compressed */
  readonly compressed: boolean;

  constructor(
    readonly ws: TerminalSocket,
    readonly clientId: string,
    readonly label: string,
    readonly canControl: boolean,
    private readonly hooks: ConnectionHooks,
  ) {
    this.compressed = typeof ws.extensions === "string" && ws.extensions.includes("permessage-deflate");
    ws.on("close", () => this.gone());
    ws.on("error", () => this.gone());
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  get isHolding(): boolean {
    return this.held !== null;
  }

  /** Bytes accepted for sending that the peer has not taken yet (held ones included). */
  get queuedBytes(): number {
    return this.ws.bufferedAmount + this.heldBytes;
  }

  /**
   * docs/protocol.md, Client → server frames: whether this connection's replay is finished, so its
   * 0x06 may reach the program. A client that acknowledges replays has finished once it said it
   * parsed every one sent so far; any other once the replay's frames have left the queue.
   */
  get replayFinished(): boolean {
    return this.acksReplays ? this.replaysParsed >= this.replayEpoch : !this.replaying;
  }

  /** A 0x07: the client parsed the oldest replay it had not acknowledged. */
  noteReplayParsed(): void {
    this.replaysParsed = Math.min(this.replaysParsed + 1, this.replayEpoch);
  }

  /** Frames from now on wait until `release`. */
  hold(): void {
    this.held ??= [];
  }

  /** Send the prepared replay frames, then everything held meanwhile, in order. */
  release(replay: Uint8Array[]): void {
    const held = this.held ?? [];
    this.held = null;
    this.heldBytes = 0;
    for (const frame of replay) this.write(frame);
    for (const frame of held) this.write(frame);
  }

  send(frame: Uint8Array): void {
    if (this.closed) return;
    if (this.held) {
      this.held.push(frame);
      this.heldBytes += frame.length;
    } else this.write(frame);
  }

  /** Run `fn` once the socket has finished writing every frame written so far (not if it closes first). */
  afterSent(fn: () => void): void {
    if (this.framesSent === this.framesWritten) queueMicrotask(fn);
    else this.sentWaiters.push({ after: this.framesWritten, run: fn });
  }

  /** Close with a code; a peer that never reads the close frame is dropped after the grace. */
  close(code: number, reason = ""): void {
    if (this.closed) return;
    this.closed = true;
    this.held = null;
    this.heldBytes = 0;
    closeSocket(this.ws, code, reason, CLOSE_GRACE_MS);
    this.hooks.onGone(this);
  }

  /** Whether it made no progress for too long, or queued too much. */
  isTooSlow(now = Date.now()): boolean {
    const queued = this.queuedBytes;
    if (queued > SEND_QUEUE_LIMIT_BYTES) return true;
    return queued > 0 && now - this.lastProgressAt > WRITE_DRAIN_TIMEOUT_MS;
  }

  private write(frame: Uint8Array): void {
    if (this.closed) return;
    if (this.ws.bufferedAmount === 0) this.lastProgressAt = Date.now();
    this.bytesSent += frame.length;
    this.framesWritten++;
    // An echo, a control frame: one ready-made frame, one write (small-frame.ts); else through ws.
    if (sendSmallFrameDirect(this.ws, frame, this.written)) return;
    // ws ignores its `threshold` under context takeover: say per message that small ones stay plain.
    this.ws.send(frame, { binary: true, compress: frame.length >= COMPRESSION_THRESHOLD_BYTES }, this.written);
  }

  /**
   * The socket finished writing one frame. One function per connection, not a closure per frame:
   * under tsx every named closure is also named at run time (`__name`, an Object.defineProperty),
   * which cost an echo ~4 µs in the server's CPU profile (docs/design.md § The path of a keystroke).
   */
  private readonly written = (err?: Error): void => {
    if (err) return;
    this.lastProgressAt = Date.now();
    this.framesSent++;
    while (this.sentWaiters.length > 0 && this.sentWaiters[0]!.after <= this.framesSent) this.sentWaiters.shift()!.run();
    this.hooks.onDrain(this);
  };

  private gone(): void {
    if (!this.closed) {
      this.closed = true;
      this.held = null;
      this.hooks.onGone(this);
    }
  }
}
