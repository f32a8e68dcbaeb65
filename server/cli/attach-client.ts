/**
 * `webmux attach`'s connection to /ws/s/{id}: output to the local terminal, keystrokes and terminal
 * replies to the session, the local size while controlling, colour-scheme reports, and reconnect
 * with resume (append) until the session ends, moves, or the user detaches.
 */
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import WebSocket from "ws";
import {
  backoffDelay,
  colorSchemeReport,
  decodeServerFrame,
  encodeAutoReply,
  encodeInput,
  encodeReplayParsed,
  encodeResize,
  encodeTakeControl,
  planReconnect,
  sanitizeLabel,
  StreamTracker,
  terminalStreamPath,
  unreachable,
  type ControlPayload,
  type ServerMessage,
} from "../contract/index.ts";
import { TerminalScanner } from "../vt/terminal-scanner.ts";
import { BACKGROUND_QUERY, isDark, parseBackgroundReply, SENTINEL_QUERY } from "./color-scheme.ts";
import type { DetachKey } from "./detach-key.ts";
import { HELD_SEQUENCE_MS, InputRouter, REPLY_WINDOW_MS, type InputAction, type QueryOwner } from "./input-router.ts";
import { RESET_TERMINAL, restoreSequence, type LocalTerminal } from "./local-terminal.ts";
import { QueryScanner } from "./query-scanner.ts";

/** A server that accepted TCP but does not finish the handshake is given up on after this, then retried. */
export const HANDSHAKE_TIMEOUT_MS = 10_000;
/** Pings this often; a connection that missed one whole interval is dead (a laptop slept, Wi-Fi changed) and is replaced. */
export const HEARTBEAT_INTERVAL_MS = 15_000;

export type AttachOutcome =
  | { kind: "detached" }
  | { kind: "exited"; exitCode: number }
  | { kind: "moved"; reason: string }
  | { kind: "not_found"; reason: string }
  | { kind: "refused"; status: number }
  | { kind: "signal"; signal: NodeJS.Signals };

export type AttachOptions = {
  /** http(s) base URL of the server */
  url: string;
  token: string;
  sessionId: string;
  terminal: LocalTerminal;
  detachKey: DetachKey | null;
  clientId?: string;
  label?: string;
  /**
   * The session was created for this attach (`webmux run`): its first snapshot is the program's
   * start, not history, so queries in it are live and their answers go to the program.
   */
  freshSession?: boolean;
  /**
   * Take control as soon as the first connection opens (`attach --take`), before sending the size,
   * so the size applies at once even while another client controls. Reconnects do not take it
   * again: control taken elsewhere meanwhile was a later, deliberate act.
   */
  takeControl?: boolean;
};

/** A client ID for this attach: kept across its reconnects, so the server keeps its control. */
export function newClientId(): string {
  return `cli-${randomBytes(8).toString("hex")}`;
}

export class AttachClient {
  readonly clientId: string;
  private readonly label: string;
  private readonly tracker = new StreamTracker();
  private readonly modes = new TerminalScanner();
  private queries = new QueryScanner();
  private readonly router: InputRouter;
  private ws: WebSocket | null = null;
  private controlling = false;
  private reportsOn = false;
  private backgroundQueryUntil = 0;
  private attempt = 0;
  private alive = true;
  private refusedStatus: number | null = null;
  private paused = false;
  private reconnectTimer: ReturnType<typeof setTimeout> | null = null;
  private heldTimer: ReturnType<typeof setTimeout> | null = null;
  private heartbeat: ReturnType<typeof setInterval> | null = null;
  private outcome: AttachOutcome | null = null;
  private snapshotIsLive: boolean;
  /** between a position frame and the status that ends its replay: the bytes are replayed */
  private replaying = false;
  /** a colour-scheme report made during a replay: sent once the server is told it was parsed */
  private reportDue: string | null = null;
  private takePending: boolean;
  private resolve: ((outcome: AttachOutcome) => void) | null = null;

  constructor(private readonly options: AttachOptions) {
    this.clientId = options.clientId ?? newClientId();
    this.label = sanitizeLabel(options.label ?? `terminal on ${hostname()}`);
    this.router = new InputRouter(options.detachKey);
    this.snapshotIsLive = options.freshSession ?? false;
    this.takePending = options.takeControl ?? false;
  }

  /** Attach until the session ends, moves or the user detaches; the local terminal is restored before this settles. */
  run(): Promise<AttachOutcome> {
    return new Promise((resolve) => {
      this.resolve = resolve;
      this.options.terminal.enter(
        (chunk) => this.onStdin(chunk),
        () => this.sendSize(null),
      );
      this.heartbeat = setInterval(() => this.checkAlive(), HEARTBEAT_INTERVAL_MS);
      this.connect();
    });
  }

  /** End from outside (a signal): restore the terminal and settle run(). */
  stop(outcome: AttachOutcome): void {
    this.finish(outcome);
  }

  // ---- connection ----

  private connect(): void {
    this.reconnectTimer = null;
    this.attempt++;
    // docs/protocol.md § Client → server frames: this client sends 0x07 once it parsed each replay.
    const path = terminalStreamPath(this.options.sessionId, { client: this.clientId, label: this.label, resume: this.tracker.resumePoint(), replayAck: true });
    const base = this.options.url.replace(/^http/, "ws");
    const ws = new WebSocket(`${base}${path}`, {
      headers: { authorization: `Bearer ${this.options.token}` },
      perMessageDeflate: false,
      handshakeTimeout: HANDSHAKE_TIMEOUT_MS,
    });
    this.ws = ws;
    this.alive = true;
    this.replaying = false;
    if (this.paused) ws.pause();
    ws.on("open", () => {
      if (this.takePending) {
        this.takePending = false;
        this.send(encodeTakeControl());
      }
      this.sendSize(null);
    });
    ws.on("message", (data, isBinary) => {
      if (ws === this.ws && isBinary) this.onFrame(data as Buffer);
    });
    ws.on("pong", () => {
      this.alive = true;
    });
    ws.on("error", (err) => {
      // ws reports a refused handshake only in the error's message.
      const status = /Unexpected server response: (\d+)/.exec(err.message);
      if (status) this.refusedStatus = Number(status[1]);
    });
    ws.on("close", (code, reason) => {
      if (ws === this.ws) this.onClose(code, reason.toString());
    });
  }

  private onClose(code: number, reason: string): void {
    this.ws = null;
    if (this.outcome) return;
    const refused = this.refusedStatus;
    this.refusedStatus = null;
    if (refused === 401 || refused === 403) return this.finish({ kind: "refused", status: refused });
    const plan = planReconnect(code, reason);
    if (plan.action === "stop") {
      if (plan.reason === "exited") this.finish({ kind: "exited", exitCode: this.tracker.exitCode ?? this.tracker.session?.exitCode ?? 0 });
      else if (plan.reason === "moved") this.finish({ kind: "moved", reason: plan.detail });
      else if (plan.reason === "not_found") this.finish({ kind: "not_found", reason: plan.detail });
      else this.finish({ kind: "refused", status: 401 });
      return;
    }
    // 4408 asks for an immediate reconnect; one before a replay completed waits like a drop.
    const delay = plan.action === "now" && this.attempt === 0 ? 0 : backoffDelay(Math.max(0, this.attempt - 1));
    this.reconnectTimer = setTimeout(() => this.connect(), delay);
  }

  private checkAlive(): void {
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) return;
    if (!this.alive) {
      ws.terminate(); // close event → reconnect and resume
      return;
    }
    this.alive = false;
    ws.ping();
  }

  private send(frame: Uint8Array): void {
    // Keys typed while disconnected are dropped, like a browser tab's: replaying them later could surprise.
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(frame);
  }

  // ---- server → local terminal ----

  private onFrame(data: Buffer): void {
    const message: ServerMessage | { type: "invalid" } = decodeServerFrame(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    if (message.type === "invalid") return;
    this.tracker.observe(message);
    switch (message.type) {
      case "control":
        this.onControl(message.control);
        break;
      case "position":
        this.replaying = true;
        break;
      case "snapshot":
        // reset: the local screen is replaced by the snapshot, modes included. Queries in history
        // were answered long ago: they are not shown to the local terminal at all.
        this.modes.reset();
        this.queries = new QueryScanner();
        if (this.options.terminal.isTerminal) this.options.terminal.write(RESET_TERMINAL);
        this.writeOutput(message.data, this.snapshotIsLive ? "program" : "replay");
        this.snapshotIsLive = false;
        break;
      case "output":
        // An append's missing bytes are replayed too.
        this.writeOutput(message.data, this.replaying ? "replay" : "program");
        break;
      case "status":
        this.attempt = 0; // a complete replay: the connection works
        if (this.replaying) this.endReplay();
        break;
      case "exit":
      case "submitStatus":
        break; // the tracker keeps the exit code and the close (4410) ends the attach; the CLI submits nothing
      default:
        unreachable(message, "server message");
    }
  }

  /**
   * Replayed bytes go out without their queries (docs/design.md, Device queries and auto-replies):
   * the local terminal would answer them now, for a question asked long ago. A query cut by the
   * start of the replay cannot be removed; its answer is expected and dropped.
   */
  private writeOutput(data: Uint8Array, owner: QueryOwner): void {
    this.modes.feed(data);
    let shown = data;
    if (owner === "replay") {
      const stripped = this.queries.strip(data);
      shown = stripped.output;
      for (const kind of stripped.owed) this.router.expect(kind, owner);
    } else for (const kind of this.queries.feed(data)) this.router.expect(kind, owner);
    if (this.options.terminal.write(shown) || this.paused) return;
    // The local terminal is slower than the stream: stop reading the socket until it drains.
    this.paused = true;
    this.ws?.pause();
    this.options.terminal.onDrain(() => {
      this.paused = false;
      this.ws?.resume();
    });
  }

  private onControl(control: ControlPayload): void {
    const controlling = control.controller?.clientId === this.clientId;
    if (controlling) this.sendSize(control);
    if (controlling && control.colorSchemeReports && (!this.controlling || !this.reportsOn)) this.queryBackground();
    this.controlling = controlling;
    this.reportsOn = control.colorSchemeReports;
  }

  /** The local size, unless the session already has it; the server applies it only from the controller. */
  private sendSize(control: ControlPayload | null): void {
    const size = this.options.terminal.size();
    if (!size) return;
    if (control && control.cols === size.cols && control.rows === size.rows) return;
    this.send(encodeResize(size));
  }

  /** OSC 11 to the local terminal; its answer becomes the 997 report (the answer itself never reaches the PTY). */
  private queryBackground(): void {
    const now = Date.now();
    if (!this.options.terminal.isTerminal || now < this.backgroundQueryUntil) return;
    this.backgroundQueryUntil = now + REPLY_WINDOW_MS;
    this.router.expect("osc11", "local", (reply) => {
      this.backgroundQueryUntil = 0;
      const color = parseBackgroundReply(reply);
      if (color) this.sendReport(colorSchemeReport(isDark(color)));
    });
    this.router.expect("da1", "local", () => {
      // DA1 answered first: the terminal ignored OSC 11, so there is no report to send.
      this.backgroundQueryUntil = 0;
      this.router.dropLocal("osc11");
    });
    this.options.terminal.write(BACKGROUND_QUERY + SENTINEL_QUERY);
  }

  /** The replay's bytes are all written: tell the server (0x07), then send a report that waited for it. */
  private endReplay(): void {
    this.replaying = false;
    this.send(encodeReplayParsed());
    const due = this.reportDue;
    this.reportDue = null;
    if (due) this.send(encodeAutoReply(due));
  }

  /** The CLI's own report (0x06): during a replay the server would drop it, so it waits. */
  private sendReport(report: string): void {
    if (this.replaying || this.ws?.readyState !== WebSocket.OPEN) this.reportDue = report;
    else this.send(encodeAutoReply(report));
  }

  // ---- local terminal → server ----

  private onStdin(chunk: Uint8Array): void {
    if (this.heldTimer) {
      clearTimeout(this.heldTimer);
      this.heldTimer = null;
    }
    this.apply(this.router.route(chunk));
    if (this.router.holding && !this.outcome) {
      this.heldTimer = setTimeout(() => {
        this.heldTimer = null;
        this.apply(this.router.flushHeld());
      }, HELD_SEQUENCE_MS);
    }
  }

  private apply(actions: InputAction[]): void {
    for (const action of actions) {
      if (this.outcome) return;
      switch (action.kind) {
        case "input":
          this.send(encodeInput(action.data));
          break;
        case "reply":
          this.send(encodeAutoReply(action.data));
          break;
        case "local":
          action.onReply(action.data);
          break;
        case "detach":
          this.finish({ kind: "detached" });
          return;
      }
    }
  }

  // ---- the end ----

  private finish(outcome: AttachOutcome): void {
    if (this.outcome) return;
    this.outcome = outcome;
    for (const timer of [this.reconnectTimer, this.heldTimer]) if (timer) clearTimeout(timer);
    if (this.heartbeat) clearInterval(this.heartbeat);
    const ws = this.ws;
    this.ws = null;
    if (ws && ws.readyState === WebSocket.OPEN) ws.close(1000, "detached");
    else ws?.terminate();
    const { terminal } = this.options;
    terminal.leave(terminal.isTerminal ? restoreSequence(this.modes.modes, this.queries) : "");
    this.resolve?.(outcome);
  }
}
