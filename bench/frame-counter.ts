/**
 * The cheapest honest `/ws/s/{id}` reader, for the throughput benchmarks: what a minimal real
 * consumer (`websocat … > /dev/null`) costs, so a figure measures the server and not a client
 * library. It does the upgrade itself over node:net (ws-handshake.ts) and counts frames straight
 * off the socket's chunks (stream-counter.ts): output is counted, never joined or copied.
 * Keystrokes are the contract's 0x00 frames, masked as a client must; pings are answered; a close
 * frame's code is recorded (4408: fell too far behind) and echoed. No permessage-deflate: the
 * compression benchmark uses bench/terminal-client.ts, which is built on `ws`.
 */
import { randomFillSync } from "node:crypto";
import { connect as connectTcp, type Socket } from "node:net";
import { encodeInput } from "../server/contract/index.ts";
import { CLOSE_NO_STATUS, StreamCounter } from "./stream-counter.ts";
import { CONNECT_TIMEOUT_MS, type ConnectOptions } from "./terminal-client.ts";
import { encodeClientFrame, WsOpcode } from "./ws-frame-parser.ts";
import { untilClientHolds } from "./wait.ts";
import { UpgradeHandshake } from "./ws-handshake.ts";
import { terminalStreamPath } from "../server/contract/terminal-query.ts";

/**
 * One read buffer per connection, reused for every read (node:net's `onread`), as a C reader
 * would: reading allocates nothing, so the readers add no garbage collection to the figure.
 * 64 KiB is what node:net reads at a time anyway.
 */
const READ_BUFFER_BYTES = 64 * 1024;
/** A server that does not answer our close frame within this is dropped. */
const CLOSE_TIMEOUT_MS = 5_000;
/** Close codes of RFC 6455 §7.4.1. */
const CLOSE_NORMAL = 1000;
const CLOSE_PROTOCOL_ERROR = 1002;
const CLOSE_ABNORMAL = 1006;

export type FrameCounterOptions = Omit<ConnectOptions, "compress">;

export class FrameCounter extends StreamCounter {
  private handshake: UpgradeHandshake | null = new UpgradeHandshake();
  private settleHandshake!: (err: Error | null) => void;
  private readonly handshakeDone = new Promise<void>((resolve, reject) => {
    this.settleHandshake = (err) => (err ? reject(err) : resolve());
  });
  private closeSent = false;
  private readonly waiters = new Set<() => void>();
  private readonly ended: Promise<void>;

  private constructor(private readonly tcp: Socket, options: FrameCounterOptions) {
    super(options.generation !== undefined && options.offset !== undefined ? options.offset : null);
    this.ended = new Promise((resolve) => tcp.once("close", () => resolve()));
    tcp.on("error", (err) => this.lost(err));
    tcp.on("close", () => this.lost(new Error("connection closed during the WebSocket handshake")));
  }

  /** Resolves once the server's position frame arrived (the stream has begun). */
  static async connect(options: FrameCounterOptions): Promise<FrameCounter> {
    const url = new URL(options.url);
    if (url.protocol !== "http:") throw new Error(`FrameCounter speaks plain ws:// only, not ${url.protocol}`);
    const resume = options.generation !== undefined && options.offset !== undefined ? { generation: options.generation, offset: options.offset } : null;
    let client: FrameCounter | null = null;
    const tcp = connectTcp({
      host: url.hostname.replace(/^\[|\]$/g, ""),
      port: Number(url.port || 80),
      // Only views of this buffer reach the parser, valid until the callback returns.
      onread: {
        buffer: Buffer.allocUnsafe(READ_BUFFER_BYTES),
        callback: (bytes, buffer) => {
          client!.read(buffer.subarray(0, bytes));
          return true;
        },
      },
    });
    tcp.setNoDelay(true);
    client = new FrameCounter(tcp, options);
    const path = `${url.pathname.replace(/\/$/, "")}${terminalStreamPath(options.sessionId, { client: options.client || undefined, resume })}`;
    tcp.write(client.handshake!.request(path, url.host, { Authorization: `Bearer ${options.token}` }));
    const deadline = setTimeout(() => tcp.destroy(new Error(`no position frame within ${CONNECT_TIMEOUT_MS} ms`)), CONNECT_TIMEOUT_MS);
    try {
      await client.handshakeDone;
      await client.until(() => client.position !== null, CONNECT_TIMEOUT_MS, "position frame");
      return client;
    } catch (err) {
      tcp.destroy();
      throw err;
    } finally {
      clearTimeout(deadline);
    }
  }

  /** TCP bytes read on this connection so far (HTTP 101 answer, frame headers and payloads). */
  get wireBytes(): number {
    return this.tcp.bytesRead;
  }

  /** The TCP socket (to pause reading, as a reader that fell behind would). */
  get socket(): Socket {
    return this.tcp;
  }

  /** Keystrokes: one 0x00 frame. */
  send(bytes: Uint8Array | string): void {
    this.write(WsOpcode.BINARY, encodeInput(bytes));
  }

  /** Resolves when `predicate` holds (checked after each socket read and on close); rejects at the deadline. */
  until(predicate: () => boolean, timeoutMs: number, what: string): Promise<void> {
    return untilClientHolds(this, this.waiters, predicate, timeoutMs, what);
  }

  /** Close (1000) and wait for the server's answer and the end of the TCP connection. */
  async close(): Promise<void> {
    if (this.tcp.closed) return;
    this.sendClose(CLOSE_NORMAL);
    const timer = setTimeout(() => this.tcp.destroy(), CLOSE_TIMEOUT_MS);
    await this.ended;
    clearTimeout(timer);
  }

  /** Drop the connection without a close handshake. */
  async terminate(): Promise<void> {
    this.tcp.destroy();
    await this.ended;
  }

  protected override pinged(payload: Uint8Array): void {
    this.write(WsOpcode.PONG, payload);
  }

  protected override closeReceived(code: number): void {
    // Echo the code (RFC 6455 §5.5.1) and end our side; the server then ends the TCP connection.
    this.sendClose(code === CLOSE_NO_STATUS ? CLOSE_NORMAL : code);
    this.tcp.end();
  }

  protected override recordClose(code: number): void {
    const first = this.closeCode === null;
    super.recordClose(code);
    if (first) this.notify();
  }

  private read(chunk: Uint8Array): void {
    if (this.handshake) {
      let rest: Uint8Array | null;
      try {
        rest = this.handshake.feed(chunk);
      } catch (err) {
        this.settleHandshake(err as Error);
        this.tcp.destroy();
        return;
      }
      if (rest === null) return;
      this.handshake = null;
      this.settleHandshake(null);
      chunk = rest;
    }
    if (!this.push(chunk)) {
      this.sendClose(CLOSE_PROTOCOL_ERROR);
      this.recordClose(CLOSE_PROTOCOL_ERROR);
      this.tcp.destroy();
    }
    this.notify();
  }

  private sendClose(code: number): void {
    if (this.closeSent || !this.tcp.writable) return;
    this.closeSent = true;
    this.write(WsOpcode.CLOSE, new Uint8Array([code >> 8, code & 0xff]));
  }

  private write(opcode: number, payload: Uint8Array): void {
    this.tcp.write(encodeClientFrame(opcode, payload, randomFillSync(new Uint8Array(4))));
  }

  /** The TCP connection failed or ended: a handshake in progress fails, an open stream counts as closed (1006). */
  private lost(err: Error): void {
    if (this.handshake) {
      this.handshake = null;
      this.settleHandshake(err);
    }
    this.recordClose(CLOSE_ABNORMAL);
  }

  private notify(): void {
    for (const check of [...this.waiters]) check();
  }
}
