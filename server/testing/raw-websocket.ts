import { randomBytes } from "node:crypto";
import { connect, type Socket } from "node:net";
import { constants as zlib, inflateRawSync } from "node:zlib";
import { encodeClientFrame, WsOpcode } from "./ws-frame-parser.ts";
import { UpgradeHandshake } from "./ws-handshake.ts";

/** WebSocket opcodes (RFC 6455 §5.2). */
export const Opcode = WsOpcode;

/** A server frame as it was on the wire: its flags, and the payload as sent (still compressed with RSV1). */
export type RawFrame = { opcode: number; payload: Buffer; fin: boolean; rsv1: boolean; masked: boolean };

export type RawUpgradeOptions = {
  headers?: Record<string, string>;
  /** source address of the TCP connection (any 127.x.y.z works on loopback) */
  localAddress?: string;
};

/**
 * A WebSocket client on a bare TCP socket, for what a well-behaved library will not do: stop
 * mid-frame, announce a frame it never sends, or open thousands of handshakes cheaply. It
 * records the handshake answer and every server frame.
 */
export class RawWebSocket {
  status = 0;
  readonly headers: Record<string, string> = {};
  /** the answer's raw head (status line and headers) */
  head = "";
  /** the body of a refused handshake */
  body = "";
  readonly frames: RawFrame[] = [];
  /** bytes of WebSocket frames received after the handshake, headers included */
  frameBytes = 0;
  closeCode: number | null = null;
  private buffer: Buffer = Buffer.alloc(0);
  private handshakeDone = false;
  private readonly answered: Promise<void>;
  private readonly ended: Promise<void>;

  private constructor(readonly socket: Socket) {
    let answer!: () => void;
    this.answered = new Promise((resolve) => (answer = resolve));
    this.ended = new Promise((resolve) => socket.once("close", () => resolve()));
    socket.on("data", (chunk: Buffer) => {
      this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
      this.parse(answer);
    });
    socket.on("error", () => {});
    // A connection dropped without any answer still settles the handshake (status stays 0).
    socket.once("close", () => {
      if (!this.handshakeDone || (this.status !== 101 && this.body === "")) this.body = this.buffer.toString("utf8");
      answer();
    });
  }

  /** Send a handshake for `path`; resolves once the server answered it (or dropped the connection). */
  static async open(baseUrl: string, path: string, options: RawUpgradeOptions = {}): Promise<RawWebSocket> {
    const client = RawWebSocket.start(baseUrl, path, options);
    await client.answered;
    return client;
  }

  /** Like open, without waiting for the answer. */
  static start(baseUrl: string, path: string, options: RawUpgradeOptions = {}): RawWebSocket {
    const { hostname, port } = new URL(baseUrl);
    const socket = connect({ host: hostname, port: Number(port), ...(options.localAddress ? { localAddress: options.localAddress } : {}) });
    const client = new RawWebSocket(socket);
    socket.write(new UpgradeHandshake().request(path, `${hostname}:${port}`, options.headers ?? {}));
    return client;
  }

  /** Settles once the server answered the handshake or the connection closed first. */
  handshake(): Promise<void> {
    return this.answered;
  }

  /** Settles when the TCP connection has closed. */
  closed(): Promise<void> {
    return this.ended;
  }

  get upgraded(): boolean {
    return this.status === 101;
  }

  /** A masked client frame (clients must mask, RFC 6455 §5.3). `announce` lies about the payload length. */
  static frame(opcode: number, payload: Uint8Array, options: { fin?: boolean; announce?: number } = {}): Buffer {
    return encodeClientFrame(opcode, payload, randomBytes(4), options);
  }

  send(opcode: number, payload: Uint8Array): void {
    this.socket.write(RawWebSocket.frame(opcode, payload));
  }

  /** Write raw bytes (part of a frame, say). */
  write(bytes: Uint8Array): Promise<void> {
    return new Promise((resolve, reject) => this.socket.write(bytes, (err) => (err ? reject(err) : resolve())));
  }

  destroy(): void {
    this.socket.destroy();
  }

  /**
   * Every message's bytes, as the application sees them. With permessage-deflate and context
   * takeover the compressed messages form one raw deflate stream (each ending in a sync flush whose
   * 00 00 ff ff the sender strips): inflating the stream so far and cutting off what came before
   * yields each message. Assumes one frame per message, as every webmux endpoint sends.
   */
  messages(): Buffer[] {
    const out: Buffer[] = [];
    const stream: Buffer[] = [];
    let before = 0;
    for (const frame of this.frames) {
      if (!frame.rsv1) {
        out.push(frame.payload);
        continue;
      }
      stream.push(frame.payload, Buffer.from([0x00, 0x00, 0xff, 0xff]));
      const all = inflateRawSync(Buffer.concat(stream), { finishFlush: zlib.Z_SYNC_FLUSH });
      out.push(Buffer.from(all.subarray(before)));
      before = all.length;
    }
    return out;
  }

  /** Every message as text (see messages). */
  texts(): string[] {
    return this.messages().map((m) => m.toString("utf8"));
  }

  private parse(answer: () => void): void {
    if (!this.handshakeDone) {
      const end = this.buffer.indexOf("\r\n\r\n");
      if (end === -1) return;
      this.head = this.buffer.subarray(0, end).toString("latin1");
      const [statusLine, ...headerLines] = this.head.split("\r\n");
      this.status = Number(statusLine!.split(" ")[1]);
      for (const line of headerLines) {
        const colon = line.indexOf(":");
        this.headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      this.buffer = this.buffer.subarray(end + 4);
      this.handshakeDone = true;
      if (this.status !== 101) {
        const length = Number(this.headers["content-length"] ?? -1);
        if (length >= 0 && this.buffer.length < length) return this.waitForBody(length, answer);
        this.body = this.buffer.toString("utf8");
        answer();
        return;
      }
      answer();
    }
    if (this.status !== 101) return;
    this.parseFrames();
  }

  private waitForBody(length: number, answer: () => void): void {
    const onData = () => {
      if (this.buffer.length < length) return;
      this.socket.off("data", onData);
      this.body = this.buffer.subarray(0, length).toString("utf8");
      answer();
    };
    this.socket.on("data", onData);
  }

  private parseFrames(): void {
    for (;;) {
      if (this.buffer.length < 2) return;
      const b0 = this.buffer[0]!;
      const b1 = this.buffer[1]!;
      let length = b1 & 0x7f;
      let header = 2;
      if (length === 126) {
        if (this.buffer.length < 4) return;
        length = this.buffer.readUInt16BE(2);
        header = 4;
      } else if (length === 127) {
        if (this.buffer.length < 10) return;
        length = Number(this.buffer.readBigUInt64BE(2));
        header = 10;
      }
      if (this.buffer.length < header + length) return;
      const payload = Buffer.from(this.buffer.subarray(header, header + length));
      const frame = { opcode: b0 & 0x0f, payload, fin: (b0 & 0x80) !== 0, rsv1: (b0 & 0x40) !== 0, masked: (b1 & 0x80) !== 0 };
      this.frameBytes += header + length;
      this.buffer = this.buffer.subarray(header + length);
      this.frames.push(frame);
      if (frame.opcode === Opcode.CLOSE) this.closeCode = frame.payload.length >= 2 ? frame.payload.readUInt16BE(0) : 1005;
    }
  }
}
