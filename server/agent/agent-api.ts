/**
 * The Agent API's core, shared by its HTTP routes (./agent-routes.ts) and /ws/agent
 * (./agent-socket.ts): one command tracker and one run queue per session, pane
 * resolution, per-token run slots, the on/off switch and the event stream.
 */
import { ErrorCode, type AgentEvent, type AgentEventName, type AgentRunResult } from "../contract/types.ts";
import type { Principal } from "../http/credentials.ts";
import { ApiError } from "../http/errors.ts";
import { Emitter } from "../session/emitter.ts";
import type { SessionRegistry } from "../session/registry.ts";
import type { Session } from "../session/session.ts";
import type { SettingsStore } from "../store/settings.ts";
import { ActiveSession } from "./active-session.ts";
import { CommandTracker, type CommandEnd, type ResumedShell } from "./command-tracker.ts";
import { TRAILING_MARKS } from "./marks.ts";
import { outputText } from "./output-text.ts";
import { RUN_RETRY_AFTER_S, RunSlots } from "./run-slots.ts";
import { SessionRunner, type RunRequest } from "./session-runner.ts";
import type { ShellIntegration } from "./shell-integration.ts";
import type { AgentTokenStore } from "./tokens.ts";

/** Most characters of output a `command_finished` event carries (the end of it): events are for noticing, `run` for output. */
export const EVENT_STDOUT_MAX_CHARS = 64 * 1024;

type Tracked = { tracker: CommandTracker; runner: SessionRunner; off: Array<() => void> };

export type AgentApiOptions = {
  registry: SessionRegistry;
  settings: SettingsStore;
  tokens: AgentTokenStore;
  integration: ShellIntegration | null;
  /** sessions taken over from the session host: where each one's shell was (docs/design.md, What survives a restart) */
  resumedShells?: ReadonlyMap<string, ResumedShell>;
};

export class AgentApi {
  readonly events = new Emitter<{ event: [AgentEvent] }>();
  readonly slots = new RunSlots();
  readonly active: ActiveSession;
  readonly registry: SessionRegistry;
  readonly settings: SettingsStore;
  readonly tokens: AgentTokenStore;
  private readonly integration: ShellIntegration | null;
  private readonly resumedShells: Map<string, ResumedShell>;
  private readonly tracked = new Map<string, Tracked>();
  private readonly unsubscribe: Array<() => void>;

  constructor(options: AgentApiOptions) {
    this.registry = options.registry;
    this.settings = options.settings;
    this.tokens = options.tokens;
    this.integration = options.integration;
    this.resumedShells = new Map(options.resumedShells);
    this.active = new ActiveSession(this.registry);
    for (const s of this.registry.list()) this.track(s);
    this.unsubscribe = [
      // Tracked from its first byte: a shell's first prompt mark may come before its pid is known.
      this.registry.events.on("added", (s) => this.track(s)),
      this.registry.events.on("created", (s) => {
        this.publish("session_created", { pane_id: s.id, command: s.command, title: s.title, cwd: s.cwd });
      }),
      this.registry.events.on("removed", (id) => this.untrack(id)),
    ];
  }

  get enabled(): boolean {
    return this.settings.get().open_api.enabled;
  }

  /** 403 while `open_api.enabled` is off: every Agent API route and /ws/agent. */
  requireEnabled(): void {
    if (!this.enabled) throw new ApiError(ErrorCode.CAPABILITY_DENIED, "the Agent API is disabled (enable open_api in the settings, or start with --open-api)");
  }

  /** The session a `pane_id` names; "auto"/"active" (or none) is the one used last. Run and send need it running. */
  resolvePane(paneId: string | undefined, needRunning: boolean): Session {
    if (paneId === undefined || paneId === "auto" || paneId === "active") {
      const session = this.active.current();
      if (!session) throw new ApiError(ErrorCode.NOT_FOUND, "No active session");
      return session;
    }
    const session = this.registry.get(paneId);
    if (!session) throw new ApiError(ErrorCode.NOT_FOUND, `no session ${paneId}`);
    if (needRunning && session.status !== "running") throw new ApiError(ErrorCode.NOT_FOUND, `session ${paneId} has exited`);
    return session;
  }

  /** Run a command for `principal`, holding one of its slots until the run settles; 429 when it has none. */
  async run(principal: Principal, session: Session, request: RunRequest, signal?: AbortSignal): Promise<AgentRunResult> {
    const release = this.slots.acquire(principal.id);
    if (!release) {
      throw new ApiError(ErrorCode.RATE_LIMITED, `this token already has ${this.slots.used(principal.id)} runs in progress; retry in ${RUN_RETRY_AFTER_S} s`, {
        "retry-after": String(RUN_RETRY_AFTER_S),
      });
    }
    try {
      const tracked = this.tracked.get(session.id);
      if (!tracked) throw new ApiError(ErrorCode.NOT_FOUND, `no session ${session.id}`);
      this.active.note(session.id);
      return await tracked.runner.run(request, signal);
    } finally {
      release();
    }
  }

  /** Runs waiting or running on a session (tests and diagnostics). */
  pendingRuns(id: string): number {
    return this.tracked.get(id)?.runner.pending ?? 0;
  }

  /** The tracker of a session (tests and diagnostics). */
  trackerOf(id: string): CommandTracker | null {
    return this.tracked.get(id)?.tracker ?? null;
  }

  close(): void {
    for (const off of this.unsubscribe) off();
    for (const id of [...this.tracked.keys()]) this.untrack(id);
    this.active.dispose();
    this.events.clear();
  }

  private track(session: Session): void {
    const tracker = new CommandTracker(
      session,
      () => this.integration?.of(session.id) ?? null,
      () => this.events.listenerCount("event") > 0,
      this.resumedShells.get(session.id) ?? null,
    );
    this.resumedShells.delete(session.id);
    const runner = new SessionRunner(session, tracker, {
      started: (command) => this.publish("command_started", { pane_id: session.id, command }),
      finished: (command, result, durationMs) =>
        this.publish("command_finished", {
          pane_id: session.id,
          command,
          exit_code: result.exit_code,
          duration_ms: durationMs,
          stdout: tail(result.stdout),
          method: result.method,
        }),
    });
    const off = [
      tracker.events.on("started", (record) => {
        // A command nobody asked the API for was typed by a person: that session is the active one now.
        if (record.owner === null) this.active.note(session.id);
        this.publish("command_started", { pane_id: session.id, command: record.command });
      }),
      tracker.events.on("finished", (end) => this.publishFinished(session, end)),
      session.events.on("exit", (exitCode) => this.publish("session_exited", { pane_id: session.id, exit_code: exitCode })),
    ];
    this.tracked.set(session.id, { tracker, runner, off });
  }

  private untrack(id: string): void {
    const tracked = this.tracked.get(id);
    if (!tracked) return;
    this.tracked.delete(id);
    for (const off of tracked.off) off();
    tracked.runner.dispose();
    tracked.tracker.dispose();
    this.integration?.forget(id);
  }

  private publishFinished(session: Session, end: CommandEnd): void {
    if (this.events.listenerCount("event") === 0) return; // rendering output is for listeners only
    const raw = end.record.output.text().replace(TRAILING_MARKS, "");
    this.publish("command_finished", {
      pane_id: session.id,
      command: end.record.command,
      exit_code: end.exitCode,
      duration_ms: Math.max(0, end.endedAt - end.record.startedAt),
      stdout: tail(outputText(raw, true)),
      method: "shell_integration",
    });
  }

  private publish(event: AgentEventName, data: AgentEvent["data"]): void {
    if (this.events.listenerCount("event") === 0) return;
    this.events.emit("event", { event, data });
  }
}

function tail(text: string): string {
  return text.length <= EVENT_STDOUT_MAX_CHARS ? text : text.slice(text.length - EVENT_STDOUT_MAX_CHARS);
}
