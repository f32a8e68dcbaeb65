/**
 * The reading half of bench/frame-counter.ts, without a socket: server → client bytes of
 * `/ws/s/{id}` in, counts out. Frames are parsed straight off the chunks (server/testing/ws-frame-parser.ts);
 * the first byte of each message is the webmux opcode (server/contract/frames.ts). Output (0x00)
 * and snapshot (0x01) payloads are counted and never joined or copied, except for a short tail of
 * the output kept for end-marker checks; the small JSON frames (position, status, exit, …) are
 * kept whole and decoded with the contract's codec, so the resume point (generation, offset)
 * follows the attach order the way bench/terminal-client.ts does.
 */
import { decodeServerFrame, ServerFrame } from "../server/contract/index.ts";
import { StreamTally } from "./stream-tally.ts";
import { WsFrameParser, WsOpcode, WsProtocolError } from "../server/testing/ws-frame-parser.ts";

/** Output bytes kept from the end of the stream: an end marker is a few dozen. */
export const OUTPUT_TAIL_BYTES = 256;
/** A JSON frame is a few hundred bytes; one past this is a broken stream, not a frame to keep. */
const MAX_KEPT_FRAME_BYTES = 1024 * 1024;
/** The last OUTPUT_TAIL_BYTES output bytes, in a fixed window: nothing is joined or kept beyond it. */
export class OutputTail {
  private readonly window = new Uint8Array(OUTPUT_TAIL_BYTES);
  private length = 0;

  /** Shift `bytes` into the window. */
  push(bytes: Uint8Array): void {
    if (bytes.length >= OUTPUT_TAIL_BYTES) {
      this.window.set(bytes.subarray(bytes.length - OUTPUT_TAIL_BYTES));
    } else {
      this.window.copyWithin(0, bytes.length);
      this.window.set(bytes, OUTPUT_TAIL_BYTES - bytes.length);
    }
    this.length = Math.min(OUTPUT_TAIL_BYTES, this.length + bytes.length);
  }

  /** The last `length` (≤ OUTPUT_TAIL_BYTES) bytes, as latin1 text. */
  text(length: number): string {
    if (length > OUTPUT_TAIL_BYTES) throw new RangeError(`only the last ${OUTPUT_TAIL_BYTES} output bytes are kept`);
    const n = Math.min(length, this.length);
    return Buffer.from(this.window.buffer, this.window.byteOffset + OUTPUT_TAIL_BYTES - n, n).toString("latin1");
  }
}

/** RFC 6455 §7.4.1: a close frame without a status code. */
export const CLOSE_NO_STATUS = 1005;

/** What the current message's payload goes to, decided by its first byte (the webmux opcode). */
const Sink = { OPCODE: 0, OUTPUT: 1, SNAPSHOT: 2, KEEP: 3, IGNORE: 4 } as const;
type Sink = (typeof Sink)[keyof typeof Sink];

export class StreamCounter extends StreamTally {
  snapshotBytes = 0;
  private readonly parser = new WsFrameParser({
    messageStart: (opcode) => this.startMessage(opcode),
    messageData: (bytes) => this.messageData(bytes),
    messageEnd: () => this.endMessage(),
    control: (opcode, payload) => this.controlFrame(opcode, payload),
  });
  private sink: Sink = Sink.OPCODE;
  private opcode = -1;
  private kept: Buffer[] = [];
  private keptBytes = 0;
  private readonly tail = new OutputTail();

  /** The last `length` (≤ OUTPUT_TAIL_BYTES) output bytes received, as latin1 text. */
  outputTail(length: number): string {
    return this.tail.text(length);
  }

  /** Feed bytes as read from the socket. False once the stream broke the protocol (see invalidFrames). */
  push(chunk: Uint8Array): boolean {
    try {
      this.parser.push(chunk);
      return true;
    } catch (err) {
      if (!(err instanceof WsProtocolError)) throw err;
      if (this.invalidFrames.at(-1) !== err.message) this.invalidFrames.push(err.message);
      return false;
    }
  }

  /** Output bytes arrived: a view of the read buffer, valid during the call. */
  protected output(_bytes: Uint8Array): void {}

  /** A ping arrived; the connection answers it with a pong of the same payload. */
  protected pinged(_payload: Uint8Array): void {}

  /** The server's close frame arrived (closeCode is set). */
  protected closeReceived(_code: number): void {}

  /** Record how the connection ended; the first code wins. */
  protected recordClose(code: number): void {
    this.closeCode ??= code;
  }

  private startMessage(opcode: number): void {
    this.sink = opcode === WsOpcode.BINARY ? Sink.OPCODE : Sink.IGNORE;
    if (opcode !== WsOpcode.BINARY) this.invalidFrames.push("text message on a binary protocol");
  }

  private messageData(bytes: Uint8Array): void {
    this.messageBytes += bytes.length;
    if (this.sink === Sink.OPCODE) {
      this.opcode = bytes[0]!;
      this.sink = this.opcode === ServerFrame.OUTPUT ? Sink.OUTPUT : this.opcode === ServerFrame.SNAPSHOT ? Sink.SNAPSHOT : Sink.KEEP;
      if (this.sink === Sink.KEEP) this.keep(bytes.subarray(0, 1));
      bytes = bytes.subarray(1);
      if (bytes.length === 0) return;
    }
    switch (this.sink) {
      case Sink.OUTPUT:
        this.countOutput(bytes.length);
        this.tail.push(bytes);
        this.output(bytes);
        break;
      case Sink.SNAPSHOT:
        this.snapshotBytes += bytes.length;
        break;
      case Sink.KEEP:
        this.keep(bytes);
        break;
      default:
        break;
    }
  }

  private endMessage(): void {
    const sink = this.sink;
    this.sink = Sink.OPCODE;
    if (sink === Sink.OPCODE) this.invalidFrames.push("frame has no opcode");
    else if (sink === Sink.OUTPUT) this.outputFrames++;
    else if (sink === Sink.SNAPSHOT) this.snapshots++;
    else if (sink === Sink.KEEP) this.handleKept();
  }

  private keep(bytes: Uint8Array): void {
    this.keptBytes += bytes.length;
    if (this.keptBytes > MAX_KEPT_FRAME_BYTES) {
      this.invalidFrames.push(`opcode 0x${this.opcode.toString(16)} frame over ${MAX_KEPT_FRAME_BYTES} bytes`);
      this.sink = Sink.IGNORE;
      this.kept = [];
      this.keptBytes = 0;
      return;
    }
    // A copy: the parser's views are only valid during the call (these frames are tiny).
    this.kept.push(Buffer.from(bytes));
  }

  private handleKept(): void {
    const data = this.kept.length === 1 ? this.kept[0]! : Buffer.concat(this.kept);
    this.kept = [];
    this.keptBytes = 0;
    this.countMessage(decodeServerFrame(data));
  }

  private controlFrame(opcode: number, payload: Uint8Array): void {
    if (opcode === WsOpcode.PING) this.pinged(payload);
    else if (opcode === WsOpcode.CLOSE) {
      const code = payload.length >= 2 ? (payload[0]! << 8) | payload[1]! : CLOSE_NO_STATUS;
      this.recordClose(code);
      this.closeReceived(code);
    }
  }
}
