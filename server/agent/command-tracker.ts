/**
 * Follows one session's shell through its integration marks (./marks.ts): whether it is at
 * a prompt ready for input, which command is running, what it printed between its C and D
 * marks and how it ended. It sees every command, typed by a person or by the Agent API,
 * and says when the shell has no integration (then runs fall back to prompt detection).
 */
import type { Session } from "../session/session.ts";
import { Emitter } from "../session/emitter.ts";
import type { ScanEvent } from "../vt/terminal-scanner.ts";
import { parseMark, type Mark } from "./marks.ts";
import { MAX_COMMAND_OUTPUT_BYTES, OutputCapture } from "./output-capture.ts";
import { outputText } from "./output-text.ts";
import type { SpawnIntegration } from "./shell-integration.ts";

/** A shell started with integration that has shown no mark this long may be one without (a user's
 * rc that execs another shell): from then on, a prompt it shows without a mark makes runs fall back
 * to prompt detection. Until it shows one, runs wait (a slow rc file: conda, nvm, pyenv). */
export const INTEGRATION_GRACE_MS = 10_000;

/** At a prompt, input is taken as ready once bracketed paste is switched on, or after output has
 * been quiet this long (shells with bracketed paste off): the line editor has started by then. */
export const INPUT_READY_QUIET_MS = 50;

/** Most bytes of a command line's echo kept to name a command a person typed (bash sends no E mark). */
export const MAX_ECHO_BYTES = 64 * 1024;

/** Output kept of a command nobody asked to run, for its `command_finished` event: the end of it. */
export const EVENT_OUTPUT_BYTES = 64 * 1024;

/** Bracketed paste (DEC private mode 2004): line editors switch it on when they start reading. */
const BRACKETED_PASTE_MODE = 2004;

export type TrackerMode = "pending" | "integrated" | "detect";

/** Whoever typed a line (an Agent API run): lets the runner recognise its own command. */
export type LineOwner = { readonly command: string };

export type CommandRecord = {
  command: string;
  startedAt: number;
  owner: LineOwner | null;
  output: OutputCapture;
};

export type CommandEnd = {
  record: CommandRecord;
  exitCode: number | null;
  endedAt: number;
  /** how the end was seen: its D mark, or the session's exit */
  via: "mark" | "exit";
};

/** A typed line that ran nothing (a syntax error, a comment), reported at the next prompt. */
export type LineRejected = { owner: LineOwner; status: number | null; output: OutputCapture };

export type TrackerEvents = {
  started: [record: CommandRecord];
  finished: [end: CommandEnd];
  rejected: [rejected: LineRejected];
  /** readiness or mode may have changed: a waiting run should look again */
  changed: [];
};

type Phase = "starting" | "prompt" | "running" | "ended";

/**
 * Where a shell was when this server took its session over from the session host, as the host
 * followed its marks (docs/design.md, What survives a restart). "none": it cannot integrate.
 */
export type ResumedShell = { phase: Phase | "none"; command: string; startedAt: number };

export class CommandTracker {
  readonly events = new Emitter<TrackerEvents>();
  private _mode: TrackerMode = "detect";
  private phase: Phase = "starting";
  private inputReady = false;
  private integration: SpawnIntegration | null = null;
  private record: CommandRecord | null = null;
  private typed: { owner: LineOwner; output: OutputCapture } | null = null;
  /** the command line an E mark announced before its C (zsh) */
  private announced: string | null = null;
  /** what the line editor echoed since the prompt ended (B): the command line as the person saw it */
  private echo: OutputCapture | null = null;
  private lastOutputAt = Date.now();
  private graceTimer: ReturnType<typeof setTimeout> | null = null;
  private graceOver = false;
  private quietTimer: ReturnType<typeof setTimeout> | null = null;
  private readonly unsubscribe: Array<() => void>;

  /**
   * @param integrationOf the integration the session's current run was started with
   * @param eventsWanted whether anyone listens for command events: a person's commands keep no output otherwise
   * @param resumed where the shell of a session taken over from the session host was
   */
  constructor(
    readonly session: Session,
    private readonly integrationOf: () => SpawnIntegration | null,
    private readonly eventsWanted: () => boolean = () => false,
    resumed: ResumedShell | null = null,
  ) {
    this.unsubscribe = [
      session.events.on("output", (chunk, events) => this.handleOutput(chunk, events)),
      session.events.on("exit", (code) => this.handleExit(code)),
      session.events.on("generation", () => this.reset()),
    ];
    this.reset();
    if (resumed && this.integration && session.status === "running") this.resume(resumed);
  }

  /** Carry on from where the host saw the shell: a command it saw start is still running, and the next run waits for it. */
  private resume(shell: ResumedShell): void {
    if (shell.phase === "starting") return; // no mark yet: pending, as for a shell that just started
    if (shell.phase === "none") {
      this.setMode("detect");
      return;
    }
    this.setMode("integrated");
    this.phase = shell.phase;
    if (shell.phase === "running") {
      const keep = this.eventsWanted() ? EVENT_OUTPUT_BYTES : 0;
      this.record = { command: shell.command, startedAt: shell.startedAt, owner: null, output: new OutputCapture(keep) };
    } else if (shell.phase === "prompt") {
      // A line editor reading switched bracketed paste on; a shell without it is taken as ready once quiet.
      this.inputReady = this.session.modes.bracketedPaste;
      if (!this.inputReady) this.scheduleQuietCheck();
    }
    this.events.emit("changed");
  }

  get mode(): TrackerMode {
    return this._mode;
  }

  /**
   * Pending past its grace: the shell may be one without integration, which only a prompt shown
   * without a mark can tell (the runner looks at the screen, then calls `fallBackToDetection`).
   */
  get unconfirmed(): boolean {
    return this._mode === "pending" && this.graceOver;
  }

  /** The unconfirmed shell showed a prompt and still no mark: drive it by prompt detection. */
  fallBackToDetection(): void {
    if (this.unconfirmed) this.setMode("detect");
  }

  /** Milliseconds since the session last printed anything. */
  quietFor(now = Date.now()): number {
    return now - this.lastOutputAt;
  }

  /** An integrated shell at a prompt whose line editor is reading, with nothing typed into it yet. */
  isReady(): boolean {
    return this._mode === "integrated" && this.phase === "prompt" && this.inputReady && this.typed === null;
  }

  /** Whether a command (with a C mark) is running right now. */
  get running(): boolean {
    return this.record !== null;
  }

  /** Bytes printed so far by the running command `owner` typed, if it has started. */
  outputOf(owner: LineOwner): OutputCapture | null {
    return this.record?.owner === owner ? this.record.output : null;
  }

  /** Type a line into the ready shell; its C mark will make the next command `owner`'s. */
  type(owner: LineOwner, bytes: string): boolean {
    if (!this.session.write(bytes)) return false;
    this.typed = { owner, output: new OutputCapture() };
    this.inputReady = false;
    return true;
  }

  /** Give up a typed line that has not started: cancel it in the shell (Ctrl-C) and forget its owner. */
  abandon(owner: LineOwner): void {
    if (this.typed?.owner === owner) {
      this.typed = null;
      this.session.write("\x03");
    } else if (this.record?.owner === owner) {
      this.record.owner = null; // it keeps running; its end is reported as anyone's command
    }
  }

  dispose(): void {
    for (const off of this.unsubscribe) off();
    this.clearTimers();
    this.events.clear();
  }

  private reset(): void {
    this.clearTimers();
    this.integration = this.integrationOf();
    this._mode = this.integration ? "pending" : "detect";
    this.phase = "starting";
    this.inputReady = false;
    this.record = null;
    this.typed = null;
    this.announced = null;
    this.echo = null;
    this.lastOutputAt = Date.now();
    this.graceOver = false;
    if (this._mode === "pending") {
      this.graceTimer = setTimeout(() => {
        this.graceTimer = null;
        this.graceOver = true;
        if (this._mode === "pending") this.events.emit("changed");
      }, INTEGRATION_GRACE_MS);
      this.graceTimer.unref?.();
    }
    this.events.emit("changed");
  }

  private clearTimers(): void {
    if (this.graceTimer) clearTimeout(this.graceTimer);
    if (this.quietTimer) clearTimeout(this.quietTimer);
    this.graceTimer = this.quietTimer = null;
  }

  private setMode(mode: TrackerMode): void {
    if (this._mode === mode) return;
    this._mode = mode;
    if (mode !== "pending" && this.graceTimer) {
      clearTimeout(this.graceTimer);
      this.graceTimer = null;
    }
    this.events.emit("changed");
  }

  private handleOutput(chunk: Uint8Array, events: readonly ScanEvent[]): void {
    this.lastOutputAt = Date.now();
    const nonce = this.integration?.nonce;
    let pos = 0;
    let readyNow = false;
    if (nonce) {
      for (const ev of events) {
        if (ev.type === "mode") {
          if (ev.mode === BRACKETED_PASTE_MODE && ev.on && this.phase === "prompt") readyNow = true;
          continue;
        }
        if (ev.type !== "osc") continue;
        const mark = parseMark(ev.code, ev.data, nonce);
        if (!mark) continue;
        this.capture(chunk.subarray(pos, ev.at));
        pos = ev.at;
        this.apply(mark);
        if (mark.kind === "A") readyNow = false; // a mode switch before A belonged to the previous prompt
      }
    }
    this.capture(chunk.subarray(pos));
    if (readyNow && this.phase === "prompt" && !this.inputReady) {
      this.inputReady = true;
      this.events.emit("changed");
    } else if (this.phase === "prompt" && !this.inputReady) {
      this.scheduleQuietCheck();
    }
  }

  private capture(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    this.record?.output.append(bytes);
    this.typed?.output.append(bytes);
    this.echo?.append(bytes);
  }

  private apply(mark: Mark): void {
    if (mark.kind === "P") {
      this.setMode("detect");
      return;
    }
    this.setMode("integrated");
    const now = Date.now();
    switch (mark.kind) {
      case "A":
        if (this.record) this.finish(mark.status, now, "mark"); // its D went missing
        if (this.typed) {
          const { owner, output } = this.typed;
          this.typed = null;
          this.events.emit("rejected", { owner, status: mark.status, output });
        }
        this.phase = "prompt";
        this.inputReady = false;
        this.echo = null;
        this.scheduleQuietCheck();
        break;
      case "B":
        if (this.phase !== "running") this.phase = "prompt";
        this.echo = new OutputCapture(MAX_ECHO_BYTES);
        break;
      case "C": {
        if (this.record) this.finish(null, now, "mark");
        const owner = this.typed?.owner ?? null;
        this.typed = null;
        const echoed = this.echo ? outputText(this.echo.text(), true).trim() : "";
        const keep = owner ? MAX_COMMAND_OUTPUT_BYTES : this.eventsWanted() ? EVENT_OUTPUT_BYTES : 0;
        this.record = { command: owner?.command ?? this.announced ?? echoed, startedAt: now, owner, output: new OutputCapture(keep) };
        this.announced = null;
        this.echo = null;
        this.phase = "running";
        this.inputReady = false;
        this.events.emit("started", this.record);
        break;
      }
      case "D":
        if (this.record) this.finish(mark.exitCode, now, "mark");
        this.phase = "ended";
        break;
      case "E":
        if (this.record && this.record.command === "") this.record.command = mark.command;
        else if (!this.record) this.announced = mark.command;
        break;
    }
  }

  private finish(exitCode: number | null, endedAt: number, via: CommandEnd["via"]): void {
    const record = this.record!;
    this.record = null;
    this.events.emit("finished", { record, exitCode, endedAt, via });
  }

  private scheduleQuietCheck(): void {
    if (this.quietTimer) return;
    this.quietTimer = setTimeout(() => {
      this.quietTimer = null;
      if (this.phase !== "prompt" || this.inputReady) return;
      if (this.quietFor() >= INPUT_READY_QUIET_MS) {
        this.inputReady = true;
        this.events.emit("changed");
      } else {
        this.scheduleQuietCheck();
      }
    }, INPUT_READY_QUIET_MS);
    this.quietTimer.unref?.();
  }

  private handleExit(exitCode: number): void {
    this.clearTimers();
    if (this.record) this.finish(exitCode, Date.now(), "exit");
    if (this.typed) {
      const { owner, output } = this.typed;
      this.typed = null;
      this.events.emit("rejected", { owner, status: exitCode, output });
    }
    this.phase = "ended";
    this.inputReady = false;
    this.events.emit("changed");
  }
}
