/**
 * RFC 6455 server → client frames parsed incrementally off a socket's chunks, without ever
 * joining a payload: a data message's bytes go to the sink as views into the chunks they arrived
 * in (valid only during the call), so a reader that only counts them copies nothing. Headers
 * (2, 4 or 10 bytes) may be split anywhere across chunks. Control frames (≤ 125 bytes by the
 * RFC) are collected whole. No extension is negotiated, so any RSV bit is a protocol error, and a
 * server must not mask, so a masked frame is one too.
 */

/** WebSocket frame opcodes (RFC 6455 §5.2). */
export const WsOpcode = {
  CONTINUATION: 0x0,
  TEXT: 0x1,
  BINARY: 0x2,
  CLOSE: 0x8,
  PING: 0x9,
  PONG: 0xa,
} as const;

/** What the parser reports, in stream order. */
export type WsFrameSink = {
  /** a text or binary message begins (its first frame's header was read) */
  messageStart(opcode: number): void;
  /** the next payload bytes of the current message; a view into the socket's chunk */
  messageData(bytes: Uint8Array): void;
  /** the message's final frame ended */
  messageEnd(): void;
  /** a close, ping or pong frame, whole (may come between the fragments of a message) */
  control(opcode: number, payload: Uint8Array): void;
};

/** The stream broke the protocol; the parser reads nothing more. */
export class WsProtocolError extends Error {
  readonly code = "WS_PROTOCOL";
  constructor(message: string) {
    super(message);
    this.name = "WsProtocolError";
  }
}

/** RFC 6455 §5.5: control frames carry at most this many payload bytes. */
const MAX_CONTROL_PAYLOAD_BYTES = 125;
/** The longest header from a server: 2 bytes, then a 64-bit length (no masking key). */
const MAX_HEADER_BYTES = 10;
/** 7-bit length values that announce a 16-bit and a 64-bit extended length. */
const LENGTH_16 = 126;
const LENGTH_64 = 127;

const isControl = (opcode: number) => (opcode & 0x8) !== 0;

export class WsFrameParser {
  private readonly header = new Uint8Array(MAX_HEADER_BYTES);
  private headerLength = 0;
  /** payload bytes of the current frame still to come; -1 while reading a header */
  private remaining = -1;
  private opcode = 0;
  private fin = false;
  private inMessage = false;
  private control: Uint8Array | null = null;
  private controlLength = 0;
  private failed: WsProtocolError | null = null;

  constructor(private readonly sink: WsFrameSink) {}

  /** Feed one chunk as read from the socket. Throws WsProtocolError (then and on every later call) on a broken stream. */
  push(chunk: Uint8Array): void {
    if (this.failed) throw this.failed;
    let at = 0;
    while (at < chunk.length) {
      if (this.remaining < 0) {
        at = this.readHeader(chunk, at);
        continue;
      }
      const take = Math.min(this.remaining, chunk.length - at);
      if (this.control) {
        this.control.set(chunk.subarray(at, at + take), this.controlLength);
        this.controlLength += take;
      } else {
        this.sink.messageData(chunk.subarray(at, at + take));
      }
      at += take;
      this.remaining -= take;
      if (this.remaining === 0) this.endFrame();
    }
  }

  /** Header bytes from `at`; returns where the payload (or the next header) starts. */
  private readHeader(chunk: Uint8Array, at: number): number {
    const needed = this.headerBytesNeeded();
    const take = Math.min(needed - this.headerLength, chunk.length - at);
    this.header.set(chunk.subarray(at, at + take), this.headerLength);
    this.headerLength += take;
    at += take;
    // The 7-bit length says whether more header follows; ask again once it is known.
    if (this.headerLength === needed && this.headerBytesNeeded() === needed) this.startFrame();
    return at;
  }

  private headerBytesNeeded(): number {
    if (this.headerLength < 2) return 2;
    const length7 = this.header[1]! & 0x7f;
    return length7 === LENGTH_16 ? 4 : length7 === LENGTH_64 ? 10 : 2;
  }

  private startFrame(): void {
    const b0 = this.header[0]!;
    const b1 = this.header[1]!;
    this.fin = (b0 & 0x80) !== 0;
    this.opcode = b0 & 0x0f;
    if ((b0 & 0x70) !== 0) this.fail("RSV bit set, but no extension was negotiated");
    if ((b1 & 0x80) !== 0) this.fail("masked frame from the server");
    const length = this.payloadLength(b1 & 0x7f);
    this.headerLength = 0;
    this.remaining = length;
    if (isControl(this.opcode)) {
      if (!this.fin) this.fail("fragmented control frame");
      if (length > MAX_CONTROL_PAYLOAD_BYTES) this.fail(`control frame of ${length} bytes`);
      if (this.opcode !== WsOpcode.CLOSE && this.opcode !== WsOpcode.PING && this.opcode !== WsOpcode.PONG) {
        this.fail(`unknown control opcode ${this.opcode}`);
      }
      this.control = new Uint8Array(length);
      this.controlLength = 0;
    } else if (this.opcode === WsOpcode.CONTINUATION) {
      if (!this.inMessage) this.fail("continuation frame outside a message");
    } else if (this.opcode === WsOpcode.TEXT || this.opcode === WsOpcode.BINARY) {
      if (this.inMessage) this.fail("new message before the last one ended");
      this.inMessage = true;
      this.sink.messageStart(this.opcode);
    } else {
      this.fail(`unknown data opcode ${this.opcode}`);
    }
    if (length === 0) this.endFrame();
  }

  private payloadLength(length7: number): number {
    const h = this.header;
    if (length7 === LENGTH_16) return (h[2]! << 8) | h[3]!;
    if (length7 !== LENGTH_64) return length7;
    const high = ((h[2]! << 24) >>> 0) + (h[3]! << 16) + (h[4]! << 8) + h[5]!;
    // Lengths above 2^53 cannot be counted exactly (and no real frame comes near).
    if (high >= 2 ** 21) this.fail("64-bit payload length out of range");
    return high * 2 ** 32 + ((h[6]! << 24) >>> 0) + (h[7]! << 16) + (h[8]! << 8) + h[9]!;
  }

  private endFrame(): void {
    this.remaining = -1;
    if (this.control) {
      const payload = this.control;
      this.control = null;
      this.sink.control(this.opcode, payload);
    } else if (this.fin) {
      this.inMessage = false;
      this.sink.messageEnd();
    }
  }

  private fail(message: string): never {
    this.failed = new WsProtocolError(message);
    throw this.failed;
  }
}

/**
 * One masked client frame (RFC 6455 §5.3): a client must mask every frame it sends. A hostile
 * test may leave `fin` off or `announce` a payload length other than the bytes it gives.
 */
export function encodeClientFrame(
  opcode: number,
  payload: Uint8Array,
  maskKey: Uint8Array,
  { fin = true, announce }: { fin?: boolean; announce?: number } = {},
): Buffer {
  const length = announce ?? payload.length;
  const extended = length < LENGTH_16 ? 0 : length <= 0xffff ? 2 : 8;
  const out = Buffer.allocUnsafe(2 + extended + 4 + payload.length);
  out[0] = (fin ? 0x80 : 0) | opcode;
  if (extended === 0) out[1] = 0x80 | length;
  else if (extended === 2) {
    out[1] = 0x80 | LENGTH_16;
    out.writeUInt16BE(length, 2);
  } else {
    out[1] = 0x80 | LENGTH_64;
    out.writeBigUInt64BE(BigInt(length), 2);
  }
  const maskAt = 2 + extended;
  out.set(maskKey.subarray(0, 4), maskAt);
  const payloadAt = maskAt + 4;
  for (let i = 0; i < payload.length; i++) out[payloadAt + i] = payload[i]! ^ maskKey[i & 3]!;
  return out;
}

/** One unmasked server frame with the shortest length form: what a server sends (for synthetic streams in tests). */
export function encodeServerFrame(opcode: number, payload: Uint8Array, fin = true): Buffer {
  const length = payload.length;
  const extended = length < LENGTH_16 ? 0 : length <= 0xffff ? 2 : 8;
  const out = Buffer.allocUnsafe(2 + extended + length);
  out[0] = (fin ? 0x80 : 0) | opcode;
  if (extended === 0) out[1] = length;
  else if (extended === 2) {
    out[1] = LENGTH_16;
    out.writeUInt16BE(length, 2);
  } else {
    out[1] = LENGTH_64;
    out.writeBigUInt64BE(BigInt(length), 2);
  }
  out.set(payload, 2 + extended);
  return out;
}
