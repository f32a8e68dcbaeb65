import WebSocket from "ws";
import xtermHeadless from "@xterm/headless";
import {
  decodeServerFrame,
  encodeAutoReply,
  encodeInput,
  encodeQuerySubmissions,
  encodeResize,
  encodeResync,
  encodeSubmit,
  encodeTakeControl,
  type ServerMessage,
} from "../contract/frames.ts";
import { encodeTerminalQuery } from "../contract/terminal-query.ts";
import type { ControlPayload, PositionPayload, SessionInfo, SubmitStatusPayload } from "../contract/types.ts";
import { browserLikeTerminal } from "./screen-state.ts";
import { waitFor } from "./wait.ts";
import { watchSocket } from "./socket-watch.ts";

const { Terminal } = xtermHeadless;
/** Regular expressions in waitForText look at this much of the end of the output. */
const REGEX_WINDOW = 64 * 1024;
/** How long waitForText waits unless told: a program started under tsx on a busy 2-core machine (two CPU-bound loops beside the suite) can take far longer than 10 s to draw. */
const TEXT_TIMEOUT_MS = 30_000;

export type TerminalClientOptions = {
  token?: string;
  headers?: Record<string, string>;
  client?: string;
  label?: string;
  resume?: { generation: string; offset: number };
  query?: Record<string, string>;
  /** mirror the stream in a headless xterm (what a browser would show) */
  screen?: { cols: number; rows: number };
  /** mirror into this terminal instead (a client reconnecting with the screen it had, as a browser does) */
  terminal?: InstanceType<typeof Terminal>;
};

/**
 * A test client of /ws/s/{id} that behaves like a careful browser: it tracks (generation, offset)
 * by summing output bytes after the position frame, keeps every frame, and can mirror the
 * stream into a headless terminal to check what a user would see.
 */
export class TerminalClient {
  readonly ws: WebSocket;
  readonly frames: ServerMessage[] = [];
  /** output chunks received since the last position frame (the replay's tail plus live output) */
  private outputChunks: Buffer[] = [];
  private outputCache: Buffer | null = Buffer.alloc(0);
  /** every output byte since connecting, across resyncs */
  allOutput: Buffer[] = [];
  position: PositionPayload | null = null;
  control: ControlPayload | null = null;
  status: SessionInfo | null = null;
  exitCode: number | null = null;
  submitStatuses: SubmitStatusPayload[] = [];
  snapshots: Buffer[] = [];
  closeCode: number | null = null;
  closeReason = "";
  /** the resume point: generation and the offset we have rendered up to */
  generation: string | null = null;
  offset = 0;
  /** payload bytes of binary messages received (after any decompression) */
  wireBytes = 0;
  readonly term: InstanceType<typeof Terminal> | null;
  private readonly opened: Promise<void>;
  private readonly closedPromise: Promise<number>;

  constructor(baseUrl: string, sessionId: string, options: TerminalClientOptions = {}) {
    // `query` carries raw (also malformed) parameters; the typed options win over it, as a client's would.
    const params = new URLSearchParams(options.query);
    const typed = encodeTerminalQuery({ client: options.client || undefined, label: options.label, resume: options.resume });
    for (const [name, value] of new URLSearchParams(typed)) params.set(name, value);
    const url = `${baseUrl.replace(/^http/, "ws")}/ws/s/${sessionId}?${params}`;
    const headers = { ...(options.token ? { authorization: `Bearer ${options.token}` } : {}), ...options.headers };
    this.ws = new WebSocket(url, { headers, perMessageDeflate: params.get("compress") === "1" });
    this.term = options.terminal ?? (options.screen ? browserLikeTerminal(options.screen.cols, options.screen.rows) : null);
    ({ opened: this.opened, closed: this.closedPromise } = watchSocket(this.ws, this));
    this.ws.on("message", (data: Buffer, isBinary) => {
      if (!isBinary) return;
      this.wireBytes += data.length;
      this.onFrame(data);
    });
  }

  static async connect(baseUrl: string, sessionId: string, options: TerminalClientOptions = {}): Promise<TerminalClient> {
    const client = new TerminalClient(baseUrl, sessionId, options);
    await client.opened;
    return client;
  }

  private onFrame(data: Buffer): void {
    const message = decodeServerFrame(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    if (message.type === "invalid") throw new Error(`server sent an invalid frame: ${message.detail}`);
    this.frames.push(message);
    switch (message.type) {
      case "output": {
        const bytes = Buffer.from(message.data);
        this.outputChunks.push(bytes);
        this.outputCache = null;
        this.allOutput.push(bytes);
        this.offset += bytes.length;
        this.term?.write(message.data);
        break;
      }
      case "position":
        this.position = message.position;
        this.generation = message.position.generation;
        // append: we continue from `start`; reset: the snapshot covers everything up to `end`
        this.offset = message.position.mode === "append" ? message.position.start : message.position.end;
        this.outputChunks = [];
        this.outputCache = Buffer.alloc(0);
        break;
      case "snapshot":
        this.snapshots.push(Buffer.from(message.data));
        if (this.term) {
          this.term.reset();
          this.term.write(message.data);
        }
        break;
      case "control":
        this.control = message.control;
        if (this.term && (this.term.cols !== message.control.cols || this.term.rows !== message.control.rows)) {
          this.term.resize(message.control.cols, message.control.rows);
        }
        break;
      case "status":
        this.status = message.session;
        break;
      case "exit":
        this.exitCode = message.exitCode;
        break;
      case "submitStatus":
        this.submitStatuses.push(message.status);
        break;
    }
  }

  /** All output bytes since the last position frame (snapshot not included). */
  get output(): Buffer {
    if (!this.outputCache) {
      this.outputCache = Buffer.concat(this.outputChunks);
      this.outputChunks = [this.outputCache];
    }
    return this.outputCache;
  }

  /** Output text since the last position frame (snapshot text not included). */
  get text(): string {
    return this.output.toString("utf8");
  }

  /** Snapshot plus output, as text: everything this client could show. */
  get shownText(): string {
    return (this.snapshots.at(-1)?.toString("utf8") ?? "") + this.text;
  }

  types(): string[] {
    return this.frames.map((f) => f.type);
  }

  send(frame: Uint8Array): void {
    this.ws.send(frame);
  }

  /**
   * Resolves once the server handled every frame this client sent before: it answers a ping only
   * after the frames ahead of it (ws's own ping callback fires when the ping is written, too early).
   */
  roundTrip(timeout = 10_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no pong within ${timeout} ms`)), timeout);
      const payload = Buffer.from(String(++this.pings));
      const onPong = (data: Buffer) => {
        if (!data.equals(payload)) return;
        clearTimeout(timer);
        this.ws.off("pong", onPong);
        resolve();
      };
      this.ws.on("pong", onPong);
      this.ws.ping(payload);
    });
  }
  private pings = 0;
  type(text: string): void {
    this.send(encodeInput(text));
  }
  resize(cols: number, rows: number): void {
    this.send(encodeResize({ cols, rows }));
  }
  resync(): void {
    this.send(encodeResync());
  }
  takeControl(): void {
    this.send(encodeTakeControl());
  }
  autoReply(bytes: string): void {
    this.send(encodeAutoReply(bytes));
  }
  submit(id: string, body: string, key = "\r", generation = this.generation!): void {
    this.send(encodeSubmit({ id, generation }, body, key));
  }
  query(ids: string[]): void {
    this.send(encodeQuerySubmissions({ ids }));
  }

  /**
   * Wait until the shown text contains `needle`. Strings are searched incrementally (floods stay
   * cheap); a RegExp is tested against the last REGEX_WINDOW bytes, which is where prompts are.
   */
  async waitForText(needle: string | RegExp, timeout = TEXT_TIMEOUT_MS): Promise<void> {
    let searchedOutput = 0;
    let lastSnapshot: Buffer | undefined;
    await waitFor(
      () => {
        const snapshot = this.snapshots.at(-1);
        if (typeof needle === "string") {
          if (snapshot !== lastSnapshot) {
            lastSnapshot = snapshot;
            searchedOutput = 0;
            if (snapshot?.includes(needle)) return true;
          }
          const out = this.output;
          const from = Math.max(0, searchedOutput - Buffer.byteLength(needle));
          searchedOutput = out.length;
          if (out.indexOf(needle, from) !== -1) return true;
          // a needle spanning the snapshot's end and the output's start
          return snapshot !== undefined && out.length < 4096 && this.shownText.includes(needle);
        }
        const out = this.output;
        const tail = out.length >= REGEX_WINDOW ? out.subarray(out.length - REGEX_WINDOW).toString("utf8") : this.shownText.slice(-REGEX_WINDOW);
        return needle.test(tail);
      },
      { timeout, message: `output containing ${needle}` },
    );
  }

  async waitForFrames(predicate: (frames: ServerMessage[]) => boolean, timeout = 10_000): Promise<void> {
    await waitFor(() => predicate(this.frames), { timeout, message: "frames" });
  }

  /** What the mirrored screen shows, one string per row (needs `screen`). */
  async screenLines(): Promise<string[]> {
    const term = this.term!;
    await new Promise<void>((resolve) => term.write("", resolve));
    const buffer = term.buffer.active;
    const lines: string[] = [];
    for (let y = 0; y < term.rows; y++) lines.push(buffer.getLine(buffer.viewportY + y)?.translateToString(true) ?? "");
    return lines;
  }

  closed(): Promise<number> {
    return this.closedPromise;
  }

  close(): Promise<number> {
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.close();
    return this.closedPromise;
  }
}
