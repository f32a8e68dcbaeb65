/**
 * Runs Agent API commands on one session, one after another in the order they came.
 * A run is typed only when the shell is at a prompt and reading (never into a program
 * that is still running, whoever started it), and ends with the command's D mark
 * (shell integration) or, in shells without integration, when the prompt is back
 * (prompt detection: no exit status). A run that times out or whose caller goes away
 * stops waiting at once; its command keeps running and the next run waits for it.
 */
import { ErrorCode, type AgentRunResult, type RunMethod } from "../contract/types.ts";
import { ApiError } from "../http/errors.ts";
import type { Session } from "../session/session.ts";
import type { CommandEnd, CommandTracker, LineRejected } from "./command-tracker.ts";
import { OutputCapture } from "./output-capture.ts";
import { outputText } from "./output-text.ts";
import { TRAILING_MARKS, TRAILING_PROMPT_MARK } from "./marks.ts";
import { commandLine, keystrokes, type LineRequest } from "./typed-line.ts";

/** Prompt detection: output quiet this long, with a prompt on the cursor's line, means the shell waits for input. */
export const PROMPT_QUIET_MS = 150;
/** Prompt detection looks at the screen this often while a run waits. */
export const PROMPT_POLL_MS = 25;
/** The end of a line that looks like a shell prompt (`$ `, `# `, `% `, `> `, `❯ `). */
const PROMPT_LIKE = /[$#%>❯»]$/;

export type RunRequest = LineRequest & { timeoutMs: number; stripAnsi: boolean };

/** A command the runner saw start or end without shell integration (its own prompt-detected runs). */
export type DetectedCommandHooks = {
  started(command: string): void;
  finished(command: string, result: AgentRunResult, durationMs: number): void;
};

class Job {
  readonly createdAt = Date.now();
  typedAt: number | null = null;
  settled = false;
  timer: ReturnType<typeof setTimeout> | null = null;
  /** what a prompt-detected run has printed so far (for a timeout's partial result) */
  partialOutput: (() => string) | null = null;
  constructor(
    readonly request: RunRequest,
    readonly command: string,
    readonly resolve: (result: AgentRunResult) => void,
    readonly reject: (err: unknown) => void,
  ) {}
}

export class SessionRunner {
  private readonly queue: Job[] = [];
  private active: Job | null = null;
  private detecting = false;
  /** the prompt prompt detection last saw, matched again to see a run end */
  private prompt: string | null = null;
  private readonly unsubscribe: Array<() => void>;

  constructor(
    readonly session: Session,
    private readonly tracker: CommandTracker,
    private readonly detected: DetectedCommandHooks,
  ) {
    this.unsubscribe = [
      tracker.events.on("finished", (end) => this.handleFinished(end)),
      tracker.events.on("rejected", (rejected) => this.handleRejected(rejected)),
      tracker.events.on("changed", () => this.pump()),
      session.events.on("exit", () => queueMicrotask(() => this.failQueued("the session's program has exited"))),
    ];
  }

  /** Queue a run; settles with its result (also on timeout, HTTP 200: docs/agent-api.md § POST /api/agent/run), or rejects when the session goes away. */
  run(request: RunRequest, signal?: AbortSignal): Promise<AgentRunResult> {
    if (this.session.status !== "running") return Promise.reject(new ApiError(ErrorCode.NOT_FOUND, `session ${this.session.id} has exited`));
    return new Promise((resolve, reject) => {
      const job = new Job(request, request.command, resolve, reject);
      job.timer = setTimeout(() => this.abort(job), request.timeoutMs);
      if (signal) {
        if (signal.aborted) return this.abort(job);
        signal.addEventListener("abort", () => this.abort(job), { once: true });
      }
      this.queue.push(job);
      this.pump();
    });
  }

  /** Runs waiting or running right now. */
  get pending(): number {
    return this.queue.length + (this.active ? 1 : 0);
  }

  dispose(): void {
    for (const off of this.unsubscribe) off();
    this.failQueued("the session was removed");
    if (this.active) this.settleError(this.active, new ApiError(ErrorCode.NOT_FOUND, "the session was removed"));
    this.active = null;
  }

  private pump(): void {
    if (this.active || this.detecting) return;
    while (this.queue[0]?.settled) this.queue.shift();
    const job = this.queue[0];
    if (!job || this.session.status !== "running") return;
    if (this.tracker.mode === "integrated") {
      if (!this.tracker.isReady()) return;
      this.queue.shift();
      this.startIntegrated(job);
    } else if (this.tracker.mode === "detect" || this.tracker.unconfirmed) {
      this.queue.shift();
      void this.runDetected(job);
    }
    // "pending" within the grace: the shell has not shown whether it integrates yet; `changed` pumps again.
  }

  private startIntegrated(job: Job): void {
    const style = { bracketedPaste: this.session.modes.bracketedPaste, ansiCQuoting: true };
    const keys = keystrokes(commandLine(job.request, style), style);
    this.active = job;
    job.typedAt = Date.now();
    if (!this.tracker.type(job, keys)) {
      this.active = null;
      this.settleError(job, new ApiError(ErrorCode.NOT_FOUND, `session ${this.session.id} has exited`));
    }
  }

  private handleFinished(end: CommandEnd): void {
    const job = this.active;
    if (!job || end.record.owner !== job) return;
    this.active = null;
    const raw = end.record.output.text().replace(TRAILING_MARKS, "");
    this.settle(job, this.result(job, end.exitCode, outputText(raw, job.request.stripAnsi), "shell_integration", end.endedAt));
    this.pump();
  }

  /** Our line ran nothing (syntax error, comment): what the shell printed after the echoed line, and its status. */
  private handleRejected(rejected: LineRejected): void {
    const job = this.active;
    if (!job || rejected.owner !== job) return;
    this.active = null;
    const raw = rejected.output.text().replace(TRAILING_PROMPT_MARK, "");
    const afterEcho = raw.slice(raw.indexOf("\n") + 1);
    this.settle(job, this.result(job, rejected.status, outputText(afterEcho, job.request.stripAnsi), "shell_integration", Date.now()));
    this.pump();
  }

  /** Timeout, or the caller went away (it gets the same partial result, which nobody reads). */
  private abort(job: Job): void {
    if (job.settled) return;
    let stdout = "";
    if (job === this.active) {
      const output = this.tracker.outputOf(job);
      if (output) stdout = outputText(output.text(), job.request.stripAnsi);
      else if (job.partialOutput) stdout = job.partialOutput();
      this.tracker.abandon(job);
      this.active = null;
    }
    this.settle(job, this.result(job, null, stdout, "timeout", Date.now()));
    queueMicrotask(() => this.pump());
  }

  private result(job: Job, exitCode: number | null, stdout: string, method: RunMethod, endedAt: number): AgentRunResult {
    return {
      exit_code: exitCode,
      stdout,
      stderr: "",
      duration: job.typedAt === null ? 0 : Math.max(0, endedAt - job.typedAt),
      pane_id: this.session.id,
      method,
    };
  }

  private settle(job: Job, result: AgentRunResult): void {
    if (job.settled) return;
    job.settled = true;
    if (job.timer) clearTimeout(job.timer);
    job.resolve(result);
  }

  private settleError(job: Job, err: unknown): void {
    if (job.settled) return;
    job.settled = true;
    if (job.timer) clearTimeout(job.timer);
    job.reject(err);
  }

  private failQueued(message: string): void {
    for (const job of this.queue.splice(0)) this.settleError(job, new ApiError(ErrorCode.NOT_FOUND, message));
  }

  // ---- prompt detection (shells without integration) ----

  private async runDetected(job: Job): Promise<void> {
    this.detecting = true;
    this.active = job;
    try {
      const prompt = await this.waitForPrompt(job);
      if (job.settled) return;
      if (this.tracker.mode === "integrated") {
        // A shell started with integration showed its first prompt, with marks, after the grace:
        // the run goes the integrated way (real exit status), first in line as it was.
        this.active = null;
        this.queue.unshift(job);
        return;
      }
      if (prompt === null) throw new ApiError(ErrorCode.NOT_FOUND, `session ${this.session.id} has exited`);
      this.tracker.fallBackToDetection();
      this.prompt = prompt;
      const style = { bracketedPaste: this.session.modes.bracketedPaste, ansiCQuoting: false };
      const line = commandLine(job.request, style);
      const capture = new OutputCapture();
      const off = this.session.events.on("output", (chunk) => capture.append(chunk));
      job.partialOutput = () => promptDetectedOutput(capture.text(), prompt, job.request.stripAnsi);
      try {
        job.typedAt = Date.now();
        this.detected.started(job.command);
        if (!this.session.write(keystrokes(line, style))) throw new ApiError(ErrorCode.NOT_FOUND, `session ${this.session.id} has exited`);
        const back = await this.waitForPrompt(job, capture);
        if (job.settled) return;
        const stdout = promptDetectedOutput(capture.text(), back ?? prompt, job.request.stripAnsi);
        const result = this.result(job, back === null ? this.session.exitCode : null, stdout, "prompt_detection", Date.now());
        this.settle(job, result);
        this.detected.finished(job.command, result, result.duration);
      } finally {
        off();
      }
    } catch (err) {
      this.settleError(job, err);
    } finally {
      if (this.active === job) this.active = null;
      this.detecting = false;
      this.pump();
    }
  }

  /**
   * The prompt on the cursor's line once output is quiet (after some output, with `capture`); null
   * when the session exits, the job ends, or (waiting for the first prompt) the shell's marks arrive.
   */
  private async waitForPrompt(job: Job, capture?: OutputCapture): Promise<string | null> {
    for (;;) {
      if (job.settled || this.session.status !== "running") return null;
      if (!capture && this.tracker.mode === "integrated") return null;
      if (this.tracker.quietFor() >= PROMPT_QUIET_MS && (!capture || capture.byteLength > 0)) {
        const screen = await this.session.readScreen();
        const row = screen.lines[screen.cursor.row] ?? "";
        const text = row.slice(0, screen.cursor.col).trimEnd();
        if (text !== "" && this.tracker.quietFor() >= PROMPT_QUIET_MS && (text === this.prompt || PROMPT_LIKE.test(text))) return text;
      }
      await new Promise((resolve) => setTimeout(resolve, PROMPT_POLL_MS));
    }
  }
}

/** What a prompt-detected run printed: the echoed line (the typed line is always one) and the prompt that came back are cut off. */
export function promptDetectedOutput(raw: string, prompt: string, stripAnsi: boolean): string {
  let text = outputText(raw, stripAnsi);
  const nl = text.indexOf("\n");
  text = nl < 0 ? "" : text.slice(nl + 1);
  const lastNl = text.lastIndexOf("\n");
  const last = text.slice(lastNl + 1);
  const plainLast = stripAnsi ? last : outputText(last, true);
  if (plainLast.trimEnd().endsWith(prompt)) {
    const kept = plainLast.trimEnd().slice(0, -prompt.length);
    text = text.slice(0, lastNl + 1) + (stripAnsi ? kept : "");
  }
  return text;
}
