/**
 * ttyd 1.7.7 as a baseline arm: a real out-of-process terminal server with a WebSocket hop,
 * written in C on libwebsockets, measured in the same run as webmux. Bench only: no test and no
 * part of the product depends on it, and it is never copied into the repository.
 *
 * Where it is: `WEBMUX_TTYD`, else /work/shared/baselines/ttyd, else ../shared/baselines/ttyd
 * beside the repository. A missing binary, or one that cannot start (its libraries: libuv1,
 * libjson-c5, libssl3, zlib1g, libcap2 and libwebsockets-evlib-uv, which its libwebsockets loads
 * as a plugin), skips the ttyd arm with a one-line note.
 *
 * Its protocol (`/ws`, subprotocol `tty`): the client's first message is JSON
 * `{"AuthToken":"","columns":C,"rows":R}`, which spawns the command on a fresh PTY; then client
 * messages are one ASCII command byte + payload (`0` input). Server messages: `0` output, `1`
 * title, `2` preferences. Every connection has its own program.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import type { Socket } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import WebSocket from "ws";
import { BENCH_COLS, BENCH_ROWS } from "./direct-pty.ts";
import { OUTPUT_TAIL_BYTES, OutputTail } from "./stream-counter.ts";
import { RawWsSocket } from "./raw-ws-socket.ts";
import { StreamTally } from "./stream-tally.ts";
import { untilClientHolds } from "./wait.ts";
import { WsFrameParser, WsOpcode, WsProtocolError } from "../server/testing/ws-frame-parser.ts";

export const TTYD_ENV = "WEBMUX_TTYD";
const SHARED_TTYD = "/work/shared/baselines/ttyd";
const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..");
/** ttyd prints its port within a few ms; a loaded machine gets far more. */
const START_TIMEOUT_MS = 15_000;
const STOP_TIMEOUT_MS = 5_000;
const CONNECT_TIMEOUT_MS = 15_000;
const CLOSE_TIMEOUT_MS = 5_000;
/** ttyd's output message: ASCII `0`, then the PTY's bytes. */
const TTYD_OUTPUT = 0x30;
/** ttyd's input message: ASCII `0`, then the keys. */
const TTYD_INPUT = 0x30;
/** ttyd pings every 5 s by default; an hour keeps pings out of the figures (they are answered anyway). */
const PING_INTERVAL_S = 3600;

/** The ttyd binary to use, or null when there is none. */
export function findTtyd(): string | null {
  const candidates = [process.env[TTYD_ENV], SHARED_TTYD, join(REPO, "..", "shared", "baselines", "ttyd")];
  for (const path of candidates) if (path && existsSync(path)) return path;
  return null;
}

export type TtydServer = {
  url: string;
  pid: number;
  /** ttyd's own RSS (its programs are separate processes), from /proc */
  rssBytes(): number;
  stop(): Promise<void>;
};

/** RSS of a process from /proc/PID/status (VmRSS), in bytes. */
export function processRssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = /^VmRSS:\s+(\d+) kB/m.exec(status)?.[1];
  if (!kib) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(kib) * 1024;
}

/**
 * Start ttyd serving `command` (run once per connection) on a free loopback port; a string
 * instead of a server says why the arm is skipped.
 */
export async function startTtyd(command: string[]): Promise<TtydServer | string> {
  const binary = findTtyd();
  if (!binary) return `ttyd not found (${TTYD_ENV}, ${SHARED_TTYD}, ../shared/baselines/ttyd)`;
  const child: ChildProcess = spawn(binary, ["-W", "-i", "lo", "-p", "0", "-P", String(PING_INTERVAL_S), "-w", tmpdir(), ...command], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let log = "";
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const port = await new Promise<number | string>((resolve) => {
    const timer = setTimeout(() => resolve(`ttyd printed no port within ${START_TIMEOUT_MS} ms`), START_TIMEOUT_MS);
    child.once("error", (err) => {
      clearTimeout(timer);
      resolve(`ttyd cannot start: ${err.message}`);
    });
    child.stderr!.on("data", (data: Buffer) => {
      log += data.toString("utf8");
      const found = /Listening on port: (\d+)/.exec(log);
      if (found) {
        clearTimeout(timer);
        resolve(Number(found[1]));
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      // Every error line: the first one names the cause (a missing evlib plugin), the last only the failure.
      const errors = log.split("\n").filter((l) => / E: /.test(l)).map((l) => l.replace(/^.* E: /, "").trim());
      resolve(`ttyd exited at start${errors.length > 0 ? `: ${errors.join("; ")}` : ""}`);
    });
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  };
  if (typeof port === "string") {
    await stop();
    return port;
  }
  // Keep draining its log, so a full pipe never blocks it.
  child.stderr!.resume();
  return { url: `http://127.0.0.1:${port}`, pid: child.pid!, rssBytes: () => processRssBytes(child.pid!), stop };
}

function hello(): Buffer {
  return Buffer.from(JSON.stringify({ AuthToken: "", columns: BENCH_COLS, rows: BENCH_ROWS }));
}

function inputMessage(keys: string): Buffer {
  return Buffer.concat([Buffer.from([TTYD_INPUT]), Buffer.from(keys, "utf8")]);
}

/**
 * The cheapest honest ttyd reader, the twin of FrameCounter: its own upgrade over node:net,
 * frames parsed off the socket's chunks, output counted and never joined or copied (a short tail
 * kept for end markers), pings answered. `offset` is output bytes since the connection opened;
 * ttyd has no position, snapshot, status or exit frame (the connection closes when the program
 * ends), so only the output half of StreamTally moves.
 */
export class TtydReader extends StreamTally {
  private readonly waiters = new Set<() => void>();
  private readonly listeners: Array<(data: Uint8Array) => void> = [];
  /** -1: at a message's first byte; 1: in an output message; 0: in any other */
  private state = -1;
  private readonly tail = new OutputTail();
  private readonly connection: RawWsSocket;
  private readonly parser = new WsFrameParser({
    messageStart: () => (this.state = -1),
    messageData: (bytes) => this.data(bytes),
    messageEnd: () => {
      if (this.state === 1) this.outputFrames++;
      this.state = -1;
    },
    control: (opcode, payload) => {
      if (opcode === WsOpcode.PING) this.write(WsOpcode.PONG, payload);
      else if (opcode === WsOpcode.CLOSE) {
        this.closeCode ??= payload.length >= 2 ? (payload[0]! << 8) | payload[1]! : 1005;
        this.tcp.end();
        this.notify();
      }
    },
  });

  private constructor(server: TtydServer) {
    super();
    this.connection = new RawWsSocket({
      url: new URL(server.url),
      path: "/ws",
      headers: { "Sec-WebSocket-Protocol": "tty" },
      read: (chunk) => this.read(chunk),
      lost: () => this.lost(),
    });
  }

  private get tcp(): Socket {
    return this.connection.tcp;
  }

  /** Connect, send the hello (which starts the program) and resolve once the upgrade is done. */
  static async connect(server: TtydServer): Promise<TtydReader> {
    const reader = new TtydReader(server);
    await reader.connection.open(CONNECT_TIMEOUT_MS, "ttyd upgrade");
    reader.write(WsOpcode.BINARY, hello());
    return reader;
  }

  get wireBytes(): number {
    return this.tcp.bytesRead;
  }

  onOutput(listener: (data: Uint8Array) => void): void {
    this.listeners.push(listener);
  }

  send(keys: string): void {
    this.write(WsOpcode.BINARY, inputMessage(keys));
  }

  outputTail(length: number): string {
    return this.tail.text(Math.min(length, OUTPUT_TAIL_BYTES));
  }

  until(predicate: () => boolean, timeoutMs: number, what: string): Promise<void> {
    return untilClientHolds(this, this.waiters, predicate, timeoutMs, `ttyd: ${what}`);
  }

  async close(): Promise<void> {
    if (this.tcp.closed) return;
    if (!this.closed) this.write(WsOpcode.CLOSE, new Uint8Array([0x03, 0xe8]));
    const timer = setTimeout(() => this.tcp.destroy(), CLOSE_TIMEOUT_MS);
    await this.connection.ended;
    clearTimeout(timer);
  }

  private data(bytes: Uint8Array): void {
    if (this.state === -1) {
      this.state = bytes[0] === TTYD_OUTPUT ? 1 : 0;
      bytes = bytes.subarray(1);
    }
    if (this.state !== 1 || bytes.length === 0) return;
    this.countOutput(bytes.length);
    this.tail.push(bytes);
    for (const listener of this.listeners) listener(bytes);
  }

  private read(chunk: Uint8Array): void {
    try {
      this.parser.push(chunk);
    } catch (err) {
      if (!(err instanceof WsProtocolError)) throw err;
      this.invalidFrames.push(err.message);
      this.closeCode ??= 1002;
      this.tcp.destroy();
    }
    this.notify();
  }

  private write(opcode: number, payload: Uint8Array): void {
    this.connection.write(opcode, payload);
  }

  private lost(): void {
    if (this.closeCode === null) {
      this.closeCode = 1006;
      this.exitAt = performance.now();
    }
    this.notify();
  }

  private notify(): void {
    for (const check of [...this.waiters]) check();
  }
}

/**
 * A ttyd client on the `ws` library, for permessage-deflate (ttyd's libwebsockets accepts the
 * offer): the twin of TerminalClient with `compress: true`, so both deflate arms read alike.
 */
export class TtydWsClient extends StreamTally {
  /** the Sec-WebSocket-Extensions ttyd answered with */
  extensions = "";
  private tcp: Socket | null = null;
  private lastOutput: Uint8Array | null = null;
  private previousOutput: Uint8Array | null = null;
  private readonly waiters = new Set<() => void>();

  private constructor(private readonly ws: WebSocket) {
    super();
    ws.on("upgrade", (res) => {
      this.tcp = res.socket;
      this.extensions = String(res.headers["sec-websocket-extensions"] ?? "");
    });
    ws.on("message", (data: Buffer) => {
      if (data.length === 0 || data[0] !== TTYD_OUTPUT) return;
      const payload = data.subarray(1);
      this.countOutput(payload.length);
      this.outputFrames++;
      this.previousOutput = this.lastOutput;
      this.lastOutput = payload;
      this.notify();
    });
    ws.on("close", (code) => {
      this.closeCode = code;
      this.exitAt = performance.now();
      this.notify();
    });
  }

  static connect(server: TtydServer, compress: boolean): Promise<TtydWsClient> {
    const ws = new WebSocket(`${server.url.replace(/^http/, "ws")}/ws`, ["tty"], { perMessageDeflate: compress });
    const client = new TtydWsClient(ws);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => fail(new Error(`ttyd: no upgrade within ${CONNECT_TIMEOUT_MS} ms`)), CONNECT_TIMEOUT_MS);
      const fail = (err: Error) => {
        clearTimeout(timer);
        ws.terminate();
        reject(err);
      };
      ws.once("error", fail);
      ws.once("open", () => {
        clearTimeout(timer);
        ws.off("error", fail);
        ws.on("error", () => {});
        ws.send(hello());
        resolve(client);
      });
    });
  }

  get wireBytes(): number {
    return this.tcp?.bytesRead ?? 0;
  }

  send(keys: string): void {
    this.ws.send(inputMessage(keys));
  }

  outputTail(length: number): string {
    const parts = [this.previousOutput, this.lastOutput].filter((p): p is Uint8Array => p !== null);
    const joined = Buffer.concat(parts.map((p) => p.subarray(Math.max(0, p.length - length))));
    return joined.subarray(Math.max(0, joined.length - length)).toString("latin1");
  }

  until(predicate: () => boolean, timeoutMs: number, what: string): Promise<void> {
    return untilClientHolds(this, this.waiters, predicate, timeoutMs, `ttyd: ${what}`);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    const closed = new Promise<void>((resolve) => this.ws.once("close", () => resolve()));
    this.ws.close(1000);
    await closed;
  }

  private notify(): void {
    for (const check of [...this.waiters]) check();
  }
}
