/**
 * The socket half of the raw readers (frame-counter.ts for webmux, ttyd.ts's TtydReader): a
 * node:net connection that reads into one reused buffer, does the upgrade itself
 * (server/testing/ws-handshake.ts) and writes masked client frames. What the frames mean is the reader's.
 */
import { randomFillSync } from "node:crypto";
import { connect as connectTcp, type Socket } from "node:net";
import { encodeClientFrame } from "../server/testing/ws-frame-parser.ts";
import { UpgradeHandshake } from "../server/testing/ws-handshake.ts";

/**
 * One read buffer per connection, reused for every read (node:net's `onread`), as a C reader
 * would: reading allocates nothing, so the readers add no garbage collection to the figure.
 * 64 KiB is what node:net reads at a time anyway.
 */
const READ_BUFFER_BYTES = 64 * 1024;

export type RawWsSocketOptions = {
  /** http://host:port of the server */
  url: URL;
  /** the request target, query included */
  path: string;
  headers: Record<string, string>;
  /** Bytes after the upgrade answer, as read: views of the read buffer, valid during the call. */
  read: (chunk: Uint8Array) => void;
  /** The connection failed or ended (after `upgraded` settled). */
  lost: (err: Error) => void;
};

export class RawWsSocket {
  readonly tcp: Socket;
  /** Resolves when the TCP connection is closed. */
  readonly ended: Promise<void>;
  /** Resolves on the 101 answer; rejects when the server refused or broke the handshake, or the connection died first. */
  readonly upgraded: Promise<void>;
  private handshake: UpgradeHandshake | null = new UpgradeHandshake();
  private settle!: (err: Error | null) => void;

  constructor(private readonly options: RawWsSocketOptions) {
    this.upgraded = new Promise<void>((resolve, reject) => {
      this.settle = (err) => (err ? reject(err) : resolve());
    });
    const { url } = options;
    this.tcp = connectTcp({
      host: url.hostname.replace(/^\[|\]$/g, ""),
      port: Number(url.port || 80),
      // Only views of this buffer reach the reader, valid until the callback returns.
      onread: {
        buffer: Buffer.allocUnsafe(READ_BUFFER_BYTES),
        callback: (bytes, buffer) => {
          this.receive(buffer.subarray(0, bytes));
          return true;
        },
      },
    });
    this.tcp.setNoDelay(true);
    this.ended = new Promise((resolve) => this.tcp.once("close", () => resolve()));
    this.tcp.on("error", (err) => this.fail(err));
    this.tcp.on("close", () => this.fail(new Error("connection closed during the WebSocket handshake")));
    this.tcp.write(this.handshake!.request(options.path, url.host, options.headers));
  }

  /** Wait for the upgrade; past `timeoutMs` (or on a refusal) the connection is dropped and this throws. */
  async open(timeoutMs: number, what: string): Promise<void> {
    const deadline = setTimeout(() => this.tcp.destroy(new Error(`no ${what} within ${timeoutMs} ms`)), timeoutMs);
    try {
      await this.upgraded;
    } catch (err) {
      this.tcp.destroy();
      throw err;
    } finally {
      clearTimeout(deadline);
    }
  }

  /** One masked client frame, if the connection can still take it. */
  write(opcode: number, payload: Uint8Array): void {
    if (this.tcp.writable) this.tcp.write(encodeClientFrame(opcode, payload, randomFillSync(new Uint8Array(4))));
  }

  private receive(chunk: Uint8Array): void {
    if (this.handshake) {
      let rest: Uint8Array | null;
      try {
        rest = this.handshake.feed(chunk);
      } catch (err) {
        this.handshake = null;
        this.settle(err as Error);
        this.tcp.destroy();
        return;
      }
      if (rest === null) return;
      this.handshake = null;
      this.settle(null);
      chunk = rest;
    }
    this.options.read(chunk);
  }

  private fail(err: Error): void {
    if (this.handshake) {
      this.handshake = null;
      this.settle(err);
    }
    this.options.lost(err);
  }
}
