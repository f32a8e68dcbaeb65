/**
 * A minimal `/ws/s/{id}` client for the benchmarks, built on server/contract's codec only:
 * it follows the attach order (control, position, snapshot or output, status, exit), keeps the
 * resume point (generation, offset) the way the PWA does, and counts what arrived: 0x00 payload
 * bytes, WebSocket message bytes (opcode + payload) and TCP bytes read (frame headers and the
 * HTTP 101 answer included).
 *
 * Not server/testing/terminal-client.ts on purpose: that one keeps every frame and a copy of all
 * output (and can mirror it into a headless xterm), which is right for asserting what a user sees
 * and wrong for a benchmark, where the client shares the 2 cores with the server it measures.
 * Per output frame this one only counts bytes, stamps the time and keeps a reference to the last
 * two payloads (to check an end marker); it copies nothing.
 */
import type { Socket } from "node:net";
import WebSocket from "ws";
import { decodeServerFrame, encodeClientMessage, encodeInput, ServerFrame } from "../server/contract/index.ts";
import { StreamTally } from "./stream-tally.ts";
import { HandshakeRefused } from "../server/testing/ws-handshake.ts";
import { untilClientHolds } from "./wait.ts";
import { terminalStreamPath } from "../server/contract/terminal-query.ts";

/** Handshake plus the first frames on a loaded machine. */
export const CONNECT_TIMEOUT_MS = 15_000;

export type ConnectOptions = {
  url: string;
  token: string;
  sessionId: string;
  client?: string;
  /** resume point */
  generation?: string;
  offset?: number;
  /** `?compress=1` and a permessage-deflate offer (docs/protocol.md § Compression) */
  compress?: boolean;
};

export class TerminalClient extends StreamTally {
  /** the payloads of the last two 0x00 frames (references, not copies), for end-marker checks */
  private lastOutput: Uint8Array | null = null;
  private previousOutput: Uint8Array | null = null;
  private readonly outputListeners = new Set<(data: Uint8Array) => void>();
  private readonly waiters = new Set<() => void>();
  private tcp: Socket | null = null;

  private constructor(
    private readonly ws: WebSocket,
    options: ConnectOptions,
  ) {
    super(options.generation !== undefined && options.offset !== undefined ? options.offset : null);
    ws.on("upgrade", (res) => (this.tcp = res.socket));
    ws.on("message", (data: Buffer) => this.handle(data));
    ws.on("close", (code) => {
      this.closeCode = code;
      this.notify();
    });
  }

  /** Resolves once the server's position frame arrived (the stream has begun). */
  static connect(options: ConnectOptions): Promise<TerminalClient> {
    const resume = options.generation !== undefined && options.offset !== undefined ? { generation: options.generation, offset: options.offset } : null;
    const path = terminalStreamPath(options.sessionId, { client: options.client || undefined, resume, compress: options.compress });
    const wsUrl = `${options.url.replace(/^http/, "ws")}${path}`;
    const ws = new WebSocket(wsUrl, { headers: { authorization: `Bearer ${options.token}` }, perMessageDeflate: options.compress === true });
    const client = new TerminalClient(ws, options);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => fail(new Error(`no position frame within ${CONNECT_TIMEOUT_MS} ms`)), CONNECT_TIMEOUT_MS);
      const fail = (err: Error) => {
        clearTimeout(timer);
        ws.terminate();
        reject(err);
      };
      ws.on("unexpected-response", (_req, res) => {
        res.resume();
        fail(new HandshakeRefused(res.statusCode ?? 0));
      });
      ws.on("error", (err) => fail(err));
      client
        .until(() => client.position !== null, CONNECT_TIMEOUT_MS, "position frame")
        .then(() => {
          clearTimeout(timer);
          resolve(client);
        }, fail);
    });
  }

  /** TCP bytes read on this connection so far (HTTP 101 answer, WebSocket frame headers and payloads). */
  get wireBytes(): number {
    return this.tcp?.bytesRead ?? 0;
  }

  /** The connection's TCP socket (for a benchmark that throttles its reading), null before the upgrade. */
  get socket(): Socket | null {
    return this.tcp;
  }

  /** The last `length` output bytes received (from the last two 0x00 frames), as latin1 text. */
  outputTail(length: number): string {
    const parts = [this.previousOutput, this.lastOutput].filter((p): p is Uint8Array => p !== null);
    const joined = Buffer.concat(parts.map((p) => p.subarray(Math.max(0, p.length - length))));
    return joined.subarray(Math.max(0, joined.length - length)).toString("latin1");
  }

  onOutput(listener: (data: Uint8Array) => void): () => void {
    this.outputListeners.add(listener);
    return () => this.outputListeners.delete(listener);
  }

  send(bytes: Uint8Array | string): void {
    this.ws.send(encodeInput(bytes));
  }

  /** Resize the session's grid (0x01 resize; the server takes it from the controller). */
  resize(cols: number, rows: number): void {
    this.ws.send(encodeClientMessage({ type: "resize", cols, rows }));
  }

  /** Resolves when `predicate` holds (checked after each message and on close); rejects at the deadline. */
  until(predicate: () => boolean, timeoutMs: number, what: string): Promise<void> {
    return untilClientHolds(this, this.waiters, predicate, timeoutMs, what);
  }

  /** Close and wait for the close handshake to finish. */
  async close(): Promise<void> {
    if (this.closed) return;
    const closed = new Promise<void>((resolve) => this.ws.once("close", () => resolve()));
    this.ws.close(1000);
    await closed;
  }

  /** Drop the connection without a close handshake (a reader that stopped reading would never finish one). */
  async terminate(): Promise<void> {
    if (this.closed) return;
    const closed = new Promise<void>((resolve) => this.ws.once("close", () => resolve()));
    this.ws.terminate();
    await closed;
  }

  private handle(data: Buffer): void {
    this.messageBytes += data.length;
    if (data.length > 0 && data[0] === ServerFrame.OUTPUT) {
      // The hot path: count and stamp, nothing else (decodeServerFrame would give the same view).
      const payload = data.subarray(1);
      this.countOutput(payload.length);
      this.outputFrames++;
      this.previousOutput = this.lastOutput;
      this.lastOutput = payload;
      for (const listener of this.outputListeners) listener(payload);
      this.notify();
      return;
    }
    this.countMessage(decodeServerFrame(data));
    this.notify();
  }

  private notify(): void {
    for (const check of [...this.waiters]) check();
  }
}
