/**
 * The client side of the WebSocket opening handshake (RFC 6455 §4.1) for the raw clients
 * (bench/raw-ws-socket.ts, server/testing/raw-websocket.ts):
 * the GET with `Upgrade: websocket` and a fresh key, and a reader of the server's answer that
 * checks the 101, the Upgrade/Connection headers and Sec-WebSocket-Accept, and that no extension
 * was negotiated (none is offered).
 */
import { createHash, randomBytes } from "node:crypto";

/** RFC 6455 §1.3: the GUID appended to the key for Sec-WebSocket-Accept. */
const WEBSOCKET_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
/** The answer to an upgrade is a few hundred bytes; this much without its end is not one. */
const MAX_ANSWER_BYTES = 16 * 1024;

/** The handshake was answered with an HTTP status instead of an upgrade (404: no hub yet). */
export class HandshakeRefused extends Error {
  constructor(readonly status: number) {
    super(`WebSocket handshake refused with HTTP ${status}`);
  }
}

/** The upgrade was answered with 101 but broke the handshake's rules. */
export class HandshakeInvalid extends Error {
  readonly code = "WS_HANDSHAKE";
  constructor(message: string) {
    super(`WebSocket handshake: ${message}`);
    this.name = "HandshakeInvalid";
  }
}

export class UpgradeHandshake {
  private readonly key = randomBytes(16).toString("base64");
  private received: Buffer = Buffer.alloc(0);

  /** The request to write, headers given as name → value (e.g. authorization). */
  request(path: string, host: string, headers: Record<string, string>): string {
    const extra = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join("");
    return (
      `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: ${this.key}\r\nSec-WebSocket-Version: 13\r\n${extra}\r\n`
    );
  }

  /**
   * Feed what the socket read: null while the answer is incomplete, then the bytes after it (the
   * first frames may share its read). Throws HandshakeRefused for a status other than 101 and
   * HandshakeInvalid for a 101 that breaks the rules. `chunk` is copied: a reused read buffer may
   * be passed.
   */
  feed(chunk: Uint8Array): Buffer | null {
    this.received = Buffer.concat([this.received, chunk]);
    const end = this.received.indexOf("\r\n\r\n");
    if (end < 0) {
      if (this.received.length > MAX_ANSWER_BYTES) throw new HandshakeInvalid(`no end of the HTTP answer in ${MAX_ANSWER_BYTES} bytes`);
      return null;
    }
    const [statusLine = "", ...lines] = this.received.subarray(0, end).toString("latin1").split("\r\n");
    const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine)?.[1] ?? 0);
    if (status !== 101) throw new HandshakeRefused(status);
    const headers = new Map<string, string>();
    for (const line of lines) {
      const colon = line.indexOf(":");
      if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
    }
    const accept = createHash("sha1").update(this.key + WEBSOCKET_GUID).digest("base64");
    if (headers.get("upgrade")?.toLowerCase() !== "websocket") throw new HandshakeInvalid("101 without Upgrade: websocket");
    if (!/(^|,)\s*upgrade\s*(,|$)/i.test(headers.get("connection") ?? "")) throw new HandshakeInvalid("101 without Connection: Upgrade");
    if (headers.get("sec-websocket-accept") !== accept) throw new HandshakeInvalid("101 with a wrong Sec-WebSocket-Accept");
    if (headers.has("sec-websocket-extensions")) throw new HandshakeInvalid("101 negotiated an extension that was not offered");
    return this.received.subarray(end + 4);
  }
}
