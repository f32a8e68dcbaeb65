/**
 * The cheapest honest `/ws/s/{id}` reader, for the throughput benchmarks: what a minimal real
 * consumer (`websocat … > /dev/null`) costs, so a figure measures the server and not a client
 * library. It does the upgrade itself over node:net (server/testing/ws-handshake.ts) and counts frames straight
 * off the socket's chunks (stream-counter.ts): output is counted, never joined or copied.
 * Keystrokes are the contract's 0x00 frames, masked as a client must; pings are answered; a close
 * frame's code is recorded (4408: fell too far behind) and echoed. No permessage-deflate: the
 * compression benchmark uses bench/terminal-client.ts, which is built on `ws`.
 */
import type { Socket } from "node:net";
import { encodeInput } from "../server/contract/index.ts";
import { CLOSE_NO_STATUS, StreamCounter } from "./stream-counter.ts";
import { CONNECT_TIMEOUT_MS, type ConnectOptions } from "./terminal-client.ts";
import { RawWsSocket } from "./raw-ws-socket.ts";
import { WsOpcode } from "../server/testing/ws-frame-parser.ts";
import { untilClientHolds } from "./wait.ts";
import { terminalStreamPath } from "../server/contract/terminal-query.ts";

/** A server that does not answer our close frame within this is dropped. */
const CLOSE_TIMEOUT_MS = 5_000;
/** Close codes of RFC 6455 §7.4.1. */
const CLOSE_NORMAL = 1000;
const CLOSE_PROTOCOL_ERROR = 1002;
const CLOSE_ABNORMAL = 1006;

export type FrameCounterOptions = Omit<ConnectOptions, "compress">;

export class FrameCounter extends StreamCounter {
  private closeSent = false;
  private readonly outputListeners: Array<(data: Uint8Array) => void> = [];
  private readonly waiters = new Set<() => void>();
  private readonly connection: RawWsSocket;

  private constructor(options: FrameCounterOptions) {
    super(options.generation !== undefined && options.offset !== undefined ? options.offset : null);
    const url = new URL(options.url);
    if (url.protocol !== "http:") throw new Error(`FrameCounter speaks plain ws:// only, not ${url.protocol}`);
    const resume = options.generation !== undefined && options.offset !== undefined ? { generation: options.generation, offset: options.offset } : null;
    this.connection = new RawWsSocket({
      url,
      path: `${url.pathname.replace(/\/$/, "")}${terminalStreamPath(options.sessionId, { client: options.client || undefined, resume })}`,
      headers: { Authorization: `Bearer ${options.token}` },
      read: (chunk) => this.read(chunk),
      // The TCP connection failed or ended: an open stream counts as closed (1006).
      lost: () => this.recordClose(CLOSE_ABNORMAL),
    });
  }

  private get tcp(): Socket {
    return this.connection.tcp;
  }

  /** Resolves once the server's position frame arrived (the stream has begun). */
  static async connect(options: FrameCounterOptions): Promise<FrameCounter> {
    const client = new FrameCounter(options);
    await client.connection.open(CONNECT_TIMEOUT_MS, "WebSocket upgrade");
    try {
      await client.until(() => client.position !== null, CONNECT_TIMEOUT_MS, "position frame");
    } catch (err) {
      client.tcp.destroy();
      throw err;
    }
    return client;
  }

  /** TCP bytes read on this connection so far (HTTP 101 answer, frame headers and payloads). */
  get wireBytes(): number {
    return this.tcp.bytesRead;
  }

  /** The TCP socket (to pause reading, as a reader that fell behind would). */
  get socket(): Socket {
    return this.tcp;
  }

  /** Be told about every output chunk (a view valid during the call), as TtydReader tells the echo meter. */
  onOutput(listener: (data: Uint8Array) => void): void {
    this.outputListeners.push(listener);
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
    await this.connection.ended;
    clearTimeout(timer);
  }

  /** Drop the connection without a close handshake. */
  async terminate(): Promise<void> {
    this.tcp.destroy();
    await this.connection.ended;
  }

  protected override output(bytes: Uint8Array): void {
    for (const listener of this.outputListeners) listener(bytes);
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
    this.connection.write(opcode, payload);
  }

  private notify(): void {
    for (const check of [...this.waiters]) check();
  }
}
