/**
 * One hybrid session (docs/design.md, Hybrid sessions): a coding-agent conversation that lives at its terminal end (the
 * TUI as a run of the webmux Session) or at its chat end (a headless agent, or none: parked).
 * Every transition goes through one SerialLock and waits for the old process to be gone before
 * the new one starts, so there is never more than one agent process for the conversation.
 */
import { rmSync } from "node:fs";
import type { ChatCaps, PermissionAnswerer } from "../contract/chat.ts";
import { CloseCode } from "../contract/protocol.ts";
import type { HybridEnd, HybridInfo, HybridState } from "../contract/types.ts";
import { processExists } from "../host/host-dir.ts";
import { Emitter } from "../session/emitter.ts";
import type { Session } from "../session/session.ts";
import type { StatusDelivery } from "../session/submission-log.ts";
import type { AgentAdapter, ConversationContext } from "./adapters/adapter.ts";
import { within } from "./adapters/agent-process.ts";
import { ChatEnd, INTERRUPT_WAIT_MS, type ChatActivity } from "./chat-end.ts";
import { ChatJournal } from "./chat-journal.ts";
import { ChatOutbox } from "./chat-outbox.ts";
import { SerialLock } from "./serial-lock.ts";
import { lastOutputLine, launchTerminal, stopTerminal, whenExited } from "./terminal-end.ts";

/** docs/design.md, Hybrid sessions: a target end that exits non-zero this soon after it started failed to start. */
export const START_FAILURE_WINDOW_MS = 5_000;
/** A TUI that has not said it started (SessionStart) after this long is taken as started. */
export const TERMINAL_START_WAIT_MS = 5_000;
/** docs/design.md, Hybrid sessions: a chat end idle this long with no chat client is closed (parked again). */
export const CHAT_IDLE_CLOSE_MS = 10 * 60_000;
/** How often an interrupted TUI is checked for having gone idle (its Stop hook). */
const INTERRUPT_POLL_MS = 50;
/**
 * A chat agent a killed server left behind gets this long to go by itself (its stdin closed with
 * the server) before a new server's chat end gives up starting: never two agents on one transcript.
 */
export const STRAY_CHAT_WAIT_MS = 10_000;

/** What of a hybrid session the session host keeps for the next server (docs/design.md, What survives a restart). */
export type SavedHybrid = {
  conversationId: string;
  previousConversationIds: string[];
  existing: boolean;
  end: HybridEnd;
  state: HybridState;
  error?: string;
  /** the chat end's agent when the state was saved: a server killed with it left it running */
  chatPid: number | null;
};

/** A move asked for while the agent works, without `interrupt`. */
export class HybridBusyError extends Error {}

export type HybridSessionOptions = {
  adapter: AgentAdapter;
  conversationId: string;
  /** the user named an existing conversation: resume it even where no transcript is found */
  existing: boolean;
  /** where the conversation opens */
  end: HybridEnd;
  cwd: string;
  /** a private directory for this session's generated files (hook settings) */
  settingsDir: string;
  /** argv that relays a hook's JSON to this server (the event name is appended) */
  hookRelay: string[];
  chatIdleCloseMs?: number;
  /** the webmux Session is being removed: its TUI's exit is not a park (its clients get 4404) */
  isRemoved: () => boolean;
  /** conversation ids the agent used before (a session taken over from the session host) */
  previousConversationIds?: readonly string[];
};

export type HybridSessionEvents = {
  /** the clients of `end` must go now: 4409 "session moved: <the other end>" */
  leaving: [end: HybridEnd];
  /** the chat journal was rebuilt: connected chat clients need a new snapshot */
  reset: [];
  deliver: [deliveries: StatusDelivery[]];
};

export class HybridSession {
  readonly events = new Emitter<HybridSessionEvents>();
  readonly journal = new ChatJournal();
  readonly lock = new SerialLock();
  readonly caps: ChatCaps;
  private session!: Session;
  private outbox!: ChatOutbox;
  private chat!: ChatEnd;
  private conversationId: string;
  private readonly previous: string[] = [];
  private end: HybridEnd = "chat";
  private state: HybridState = "parked";
  private error: string | undefined;
  private existing: boolean;
  /** the end being left while a move stops it; hooks and driver events then change nothing visible */
  private movingFrom: HybridEnd | null = null;
  private stoppingTerminal = false;
  private terminalBusy = false;
  private terminalStartedAt = 0;
  private terminalStarted: (() => void) | null = null;
  private journalReady: Promise<void> = Promise.resolve();
  private chatStarting = false;
  private chatClients = 0;
  private idleTimer: ReturnType<typeof setTimeout> | null = null;
  private disposed = false;
  /** a chat agent of a server that was killed, which may still run */
  private strayChatPid: number | null = null;

  constructor(private readonly options: HybridSessionOptions) {
    this.previous.push(...(options.previousConversationIds ?? []));
    this.conversationId = options.conversationId;
    this.existing = options.existing;
    this.end = options.end;
    // What the session list shows from its first event on, before `open` ran.
    this.state = options.end === "terminal" ? "starting" : "parked";
    this.caps = { ...options.adapter.caps };
  }

  get agent(): string {
    return this.options.adapter.name;
  }
  get cwd(): string {
    return this.options.cwd;
  }
  get settingsDir(): string {
    return this.options.settingsDir;
  }
  get currentEnd(): HybridEnd {
    return this.end;
  }
  get conversation(): string {
    return this.conversationId;
  }
  /** pid of the headless agent at the chat end, if one runs */
  get chatPid(): number | null {
    return this.chat?.pid ?? null;
  }

  info(): HybridInfo {
    const info: HybridInfo = {
      agent: this.options.adapter.name,
      conversationId: this.conversationId,
      previousConversationIds: [...this.previous],
      end: this.end,
      state: this.state,
    };
    if (this.error !== undefined) info.error = this.error;
    return info;
  }

  /** What the session host keeps, as of now. */
  saved(): SavedHybrid {
    return {
      conversationId: this.conversationId,
      previousConversationIds: [...this.previous],
      existing: this.existing,
      end: this.end,
      state: this.state,
      ...(this.error !== undefined ? { error: this.error } : {}),
      chatPid: this.chat?.pid ?? null,
    };
  }

  /** Bind the webmux Session that carries the id and the terminal runs, then open at the first end. */
  async open(session: Session): Promise<void> {
    const { end } = this.options;
    this.bind(session);
    const opening = this.lock.run(() => (end === "terminal" ? this.startTerminal() : this.loadJournal()));
    if (end === "chat") this.journalReady = opening.catch(() => {});
    await opening;
  }

  /**
   * Carry on a session a restarted server took over from the session host: its TUI runs on at
   * the terminal end, or it is parked at the chat end (its chat agent, if one ran, died with the
   * old server's pipes); the transcript is the chat history, as after any move.
   */
  resume(session: Session, saved: SavedHybrid): void {
    this.bind(session);
    this.strayChatPid = saved.chatPid;
    if (saved.end === "terminal" && session.status === "running") {
      this.end = "terminal";
      this.terminalStartedAt = 0;
      const state = saved.state === "busy" || saved.state === "awaiting_permission" ? saved.state : "idle";
      this.terminalBusy = state === "busy";
      this.setState(state);
      return;
    }
    // A TUI that ended while no server ran parks the session, as its exit would have.
    this.end = "chat";
    this.setState("parked", saved.end === "chat" ? saved.error : undefined);
    this.journalReady = this.lock.run(() => this.loadJournal()).catch(() => {});
  }

  private bind(session: Session): void {
    this.session = session;
    this.outbox = new ChatOutbox(session.submissions, (deliveries) => this.events.emit("deliver", deliveries));
    this.chat = new ChatEnd(this.journal, this.outbox, {
      activity: (state) => this.chatActivity(state),
      conversation: (id) => this.adoptConversation(id),
      exited: (error) => {
        this.setState("parked", error);
        this.armIdleClose();
      },
      warning: (message) => {
        this.caps.permissions = false;
        this.setState(this.state, message);
      },
      attention: () => session.raiseAttention(),
    });
    session.events.on("exit", (code) => this.onTerminalExit(code));
  }

  private context(): ConversationContext {
    return { cwd: this.options.cwd, env: this.session.env, conversationId: this.conversationId };
  }

  private setState(state: HybridState, error?: string): void {
    this.state = state;
    this.error = error;
    this.journal.setStatus({ state, ...(error !== undefined ? { error } : {}), conversationId: this.conversationId });
    this.session.touch(false);
  }

  /** The agent named its conversation (SessionStart, system/init): a new id keeps the old one in the history. */
  private adoptConversation(id: string): void {
    if (id === this.conversationId) return;
    // Whether the new id has a transcript to resume is read from disk at the next start.
    this.existing = false;
    if (this.conversationId !== "" && !this.previous.includes(this.conversationId)) this.previous.push(this.conversationId);
    this.conversationId = id;
    this.setState(this.state, this.error);
  }

  // ---- moves ----

  /** Move the conversation to `to` (docs/design.md, Hybrid sessions); throws HybridBusyError while busy without `interrupt`. */
  move(to: HybridEnd, interrupt: boolean): Promise<void> {
    return this.lock.run(async () => {
      if (this.disposed) return;
      if (to === this.end) return;
      if ((this.state === "busy" || this.state === "awaiting_permission") && !interrupt) {
        throw new HybridBusyError(`the agent is ${this.state === "busy" ? "busy" : "waiting for a permission answer"}; move with interrupt to stop it`);
      }
      if (to === "chat") await this.terminalToChat(interrupt);
      else await this.chatToTerminal();
    });
  }

  private async terminalToChat(interrupt: boolean): Promise<void> {
    const wasBusy = this.terminalBusy;
    this.movingFrom = "terminal";
    this.setState("moving");
    this.events.emit("leaving", "terminal");
    if (interrupt && wasBusy && this.session.status === "running") {
      this.session.write(this.options.adapter.terminalInterrupt);
      await waitUntil(() => !this.terminalBusy || this.session.status !== "running", INTERRUPT_WAIT_MS);
    }
    this.stoppingTerminal = true;
    try {
      await stopTerminal(this.session, this.options.adapter.terminalStop);
    } finally {
      this.stoppingTerminal = false;
    }
    this.movingFrom = null;
    this.end = "chat";
    this.terminalBusy = false;
    this.setState("parked");
    await this.loadJournal();
  }

  private async chatToTerminal(): Promise<void> {
    this.movingFrom = "chat";
    this.setState("moving");
    this.clearIdleClose();
    this.events.emit("leaving", "chat");
    await this.chat.stop();
    this.outbox.failAll();
    this.movingFrom = null;
    await this.startTerminal();
  }

  private async startTerminal(): Promise<void> {
    const { adapter } = this.options;
    this.end = "terminal";
    this.terminalBusy = false;
    this.setState("starting");
    const resume = this.existing || (await adapter.hasTranscript(this.context()));
    const started = new Promise<void>((resolve) => (this.terminalStarted = resolve));
    this.terminalStartedAt = Date.now();
    try {
      launchTerminal(this.session, adapter.terminalLaunch({ ...this.context(), resume, settingsDir: this.options.settingsDir, hookRelay: this.options.hookRelay }));
    } catch (err) {
      this.end = "chat";
      this.setState("parked", `the terminal end failed to start: ${(err as Error).message}`);
      await this.loadJournal();
      return;
    }
    if (adapter.terminalReportsStart) await within(Promise.race([started, whenExited(this.session)]), TERMINAL_START_WAIT_MS);
    this.terminalStarted = null;
    if (this.end === "terminal" && this.state === "starting") this.setState("idle");
  }

  /** The TUI ended without a move: park at the chat end (its clients get 4409, the conversation lives on). */
  private onTerminalExit(code: number): void {
    if (this.stoppingTerminal || this.end !== "terminal" || this.disposed || this.options.isRemoved()) return;
    const failed = code !== 0 && Date.now() - this.terminalStartedAt < START_FAILURE_WINDOW_MS;
    const why = failed ? lastOutputLine(this.session) : "";
    this.events.emit("leaving", "terminal");
    this.end = "chat";
    this.terminalBusy = false;
    this.setState("parked", failed ? `the terminal end failed to start (exit code ${code})${why ? `: ${why}` : ""}` : undefined);
    this.terminalStarted?.();
    this.journalReady = this.lock.run(() => this.loadJournal());
  }

  /** Entering the chat end: the transcript (the source of truth) becomes the chat history. */
  private async loadJournal(): Promise<void> {
    const { adapter } = this.options;
    if (adapter.locateConversation) {
      const found = await adapter.locateConversation({ ...this.context(), since: this.terminalStartedAt }).catch(() => null);
      if (found) this.adoptConversation(found);
    }
    const messages = this.conversationId === "" ? [] : await adapter.readTranscript(this.context()).catch(() => []);
    this.journal.reset(messages);
    this.events.emit("reset");
  }

  /** Where a terminal attach must close at once: 4409 unless the TUI runs and no move is under way. */
  terminalRefusal(): { code: number; reason: string } | null {
    if (this.end === "terminal" && this.movingFrom === null && this.session.status === "running") return null;
    return { code: CloseCode.MOVED, reason: "session moved: chat" };
  }

  // ---- hooks (terminal end) ----

  handleHook(event: string, payload: unknown): void {
    if (this.end !== "terminal" || this.disposed) return;
    const signal = this.options.adapter.readHook(event, payload);
    switch (signal.kind) {
      case "started":
        if (signal.conversationId) this.adoptConversation(signal.conversationId);
        this.terminalStarted?.();
        if (this.state === "starting") this.setState("idle");
        return;
      case "busy":
      case "idle":
        this.terminalBusy = signal.kind === "busy";
        if (this.movingFrom === null && this.state !== "starting") this.setState(signal.kind);
        return;
      case "attention":
        this.session.raiseAttention();
        if (signal.permission && this.movingFrom === null && this.state !== "starting") this.setState("awaiting_permission");
        return;
      case "ignored":
        return;
    }
  }

  // ---- chat end ----

  /** Whether a chat client may attach (waits for a move or a transcript read under way). */
  async chatAttachable(): Promise<boolean> {
    if (this.movingFrom !== null) await this.lock.settled();
    await this.journalReady;
    return this.end === "chat" && !this.disposed;
  }

  chatClientJoined(): void {
    this.chatClients++;
    this.clearIdleClose();
    this.ensureChat();
  }

  chatClientLeft(): void {
    this.chatClients = Math.max(0, this.chatClients - 1);
    this.armIdleClose();
  }

  /** A chat `send`: queued (answered `received`), then written when the agent is ready and idle. */
  send(clientId: string, id: string, text: string): void {
    if (!this.outbox.accept(clientId, id, text)) return;
    if (this.end !== "chat" || this.movingFrom !== null || this.disposed) {
      this.outbox.failAll();
      return;
    }
    this.clearIdleClose();
    this.ensureChat();
    this.chat.pump();
  }

  rejectSend(clientId: string, id: string): void {
    this.outbox.reject(clientId, id);
  }

  querySends(clientId: string, ids: readonly string[]) {
    return this.outbox.query(clientId, ids);
  }

  respondPermission(requestId: string, decision: "allow" | "deny", by: PermissionAnswerer, extra: { updatedInput?: unknown; message?: string }): boolean {
    return this.chat.respond(requestId, decision, by, extra);
  }

  interrupt(): void {
    this.chat.interrupt();
  }

  private ensureChat(): void {
    if (this.end !== "chat" || this.chat.running || this.chatStarting || this.disposed) return;
    this.chatStarting = true;
    void this.lock
      .run(() => this.startChat())
      .catch((err) => console.error("webmux: chat end failed:", err))
      .finally(() => {
        this.chatStarting = false;
        this.armIdleClose();
      });
  }

  private async startChat(): Promise<void> {
    if (this.end !== "chat" || this.chat.running || this.disposed) return;
    const { adapter } = this.options;
    this.setState("starting");
    if (!(await this.strayChatGone())) {
      this.setState("parked", `the chat end's previous agent (pid ${this.strayChatPid}) still runs; try again once it has ended`);
      this.outbox.failAll();
      return;
    }
    const resume = this.existing || (await adapter.hasTranscript(this.context()));
    try {
      await this.chat.start(adapter.createChatDriver({ ...this.context(), resume }));
    } catch (err) {
      this.setState("parked", `the chat end failed to start: ${(err as Error).message}`);
      this.outbox.failAll();
      return;
    }
    this.setState("idle");
    this.chat.pump();
  }

  /** Whether the chat agent a killed server left behind is gone (waiting up to STRAY_CHAT_WAIT_MS for it). */
  private async strayChatGone(): Promise<boolean> {
    const pid = this.strayChatPid;
    if (pid === null) return true;
    await waitUntil(() => !processExists(pid), STRAY_CHAT_WAIT_MS);
    if (processExists(pid)) return false;
    this.strayChatPid = null;
    return true;
  }

  private chatActivity(state: ChatActivity): void {
    if (this.end !== "chat" || this.movingFrom !== null || !this.chat.running) return;
    this.setState(state, this.error);
    if (state === "idle") this.armIdleClose();
  }

  private armIdleClose(): void {
    this.clearIdleClose();
    if (this.chatClients > 0 || !this.chat?.running || this.journal.runningTurn || this.outbox.size > 0 || this.disposed) return;
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null;
      void this.lock.run(async () => {
        if (this.chatClients > 0 || this.journal.runningTurn || this.end !== "chat" || !this.chat.running) return;
        await this.chat.stop();
        this.setState("parked");
      });
    }, this.options.chatIdleCloseMs ?? CHAT_IDLE_CLOSE_MS);
    this.idleTimer.unref?.();
  }

  private clearIdleClose(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
  }

  /** The server exits and the session lives on in the session host: stop the chat end's agent, keep the TUI's hook settings. */
  async release(): Promise<void> {
    await this.dispose(false);
  }

  /** The session is gone: stop the chat end's agent and forget generated files. */
  async dispose(removeFiles = true): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    this.clearIdleClose();
    await this.lock.run(async () => {
      await this.chat?.stop();
      this.outbox?.failAll();
    });
    this.journal.dispose();
    this.events.clear();
    if (removeFiles) rmSync(this.options.settingsDir, { recursive: true, force: true });
  }
}

async function waitUntil(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition() && Date.now() < deadline) await new Promise((r) => setTimeout(r, INTERRUPT_POLL_MS));
}
