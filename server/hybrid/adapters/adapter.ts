/**
 * The one interface between the hybrid session core and a coding agent (docs/design.md, Hybrid sessions).
 * The core knows conversations, ends, moves and the chat journal; everything an agent does its
 * own way (command lines, transcripts, hooks, the headless protocol) lives behind this, so adding
 * an agent is a new adapter and nothing else.
 */
import type { ChatCaps, ChatMessage, ChatPermission, TurnStatus } from "../../contract/chat.ts";
import type { Emitter } from "../../session/emitter.ts";

/** Conversation ids name files (transcripts): nothing that could leave the agent's directory. */
export const CONVERSATION_ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

/** Where and how the agent runs for one hybrid session. */
export type AgentContext = {
  /** the session's working directory (where the agent was started) */
  cwd: string;
  /** the environment every agent process of the session gets */
  env: Readonly<Record<string, string>>;
};

export type ConversationContext = AgentContext & {
  /** "" while the agent has not told us yet (agents that mint their own ids) */
  conversationId: string;
};

/** What the terminal end runs, and how webmux learns about it. */
export type TerminalLaunch = {
  command: string[];
  /** the injected hook settings file, written before the run starts */
  hookSettings?: { path: string; text: string };
};

/** How the agent's TUI is asked to stop: a signal first, SIGKILL after the grace. */
export type TerminalStop = { signal: NodeJS.Signals; graceMs: number };

/** What an agent hook (posted by the relay) means for the session. */
export type HookSignal =
  | { kind: "started"; conversationId: string | null }
  | { kind: "busy" }
  | { kind: "idle" }
  | { kind: "attention"; permission: boolean }
  | { kind: "ignored" };

/** `interrupt` with a denial also ends the turn (a move or an interrupt cancels the request). */
export type PermissionAnswer = { behavior: "allow"; updatedInput?: unknown } | { behavior: "deny"; message?: string; interrupt?: boolean };

/** Normalised events of a chat driver, in the order the agent produced them. */
export type ChatDriverEvents = {
  /** the agent said which conversation this is (Claude: `system/init`, Codex: `thread.started`) */
  init: [conversationId: string];
  /** a whole message, or a new version of one (upsert by id) */
  message: [message: ChatMessage];
  /** text appended to `parts[part]` of a message an earlier `message` created */
  delta: [messageId: string, part: number, text: string];
  permission: [request: ChatPermission];
  /** the agent stopped waiting for this answer (interrupted) */
  permissionCanceled: [requestId: string];
  turnEnd: [status: TurnStatus, costUsd: number | undefined, error: string | undefined];
  /** something the user should know that is not a message (e.g. permissions unavailable) */
  warning: [code: "permissions_unavailable", message: string];
  /** the process is gone; `error` explains an unexpected end */
  exit: [code: number | null, error: string | undefined];
};

/** One running chat end: a headless agent process (or one per turn) speaking a structured protocol. */
export interface ChatDriver {
  readonly events: Emitter<ChatDriverEvents>;
  /** Resolves once the agent is ready for a first turn; rejects (and cleans up) when it cannot start. */
  start(): Promise<void>;
  /**
   * Start a turn with this user message. Resolves true once its bytes were written to the agent's
   * stdin, false when the agent went away first. `messageId` names the user message in the transcript.
   */
  send(turn: { id: string; text: string; messageId: string }): Promise<boolean>;
  respond(requestId: string, answer: PermissionAnswer): void;
  interrupt(): void;
  /** Close stdin, then SIGTERM, then SIGKILL; resolves once the process is gone. */
  close(): Promise<void>;
  /** pid of the running process, if one runs */
  readonly pid: number | null;
}

export interface AgentAdapter {
  /** "claude", "codex", … as SessionInfo.hybrid.agent shows it */
  readonly name: string;
  readonly caps: ChatCaps;
  /** the command the session shows (`SessionInfo.command`) */
  displayCommand(): string[];
  /** Throws a message a user can act on when the agent's program cannot be found. */
  checkInstalled(ctx: AgentContext): void;
  /** A new conversation id, when the agent accepts a preset one; null when it mints its own. */
  newConversationId(): string | null;
  /** Why `id` cannot name one of this agent's conversations (e.g. not a UUID), or null when it can. */
  conversationIdProblem?(id: string): string | null;
  /** Why the named conversation would not resume from this cwd (e.g. it belongs to another directory), or null. */
  resumeProblem?(ctx: ConversationContext): Promise<string | null>;
  /** Whether the conversation has a transcript yet (so it must be resumed rather than started). */
  hasTranscript(ctx: ConversationContext): Promise<boolean>;
  /** The conversation as chat messages, read from the transcript (the source of truth). */
  readTranscript(ctx: ConversationContext): Promise<ChatMessage[]>;
  /** The TUI for a conversation: new (`resume` false) or resumed, with hooks that post to `hookRelay`. */
  terminalLaunch(ctx: ConversationContext & { resume: boolean; settingsDir: string; hookRelay: string[] }): TerminalLaunch;
  readonly terminalStop: TerminalStop;
  /** The TUI says when it started (a hook reports `started`); without that it is taken as started at once. */
  readonly terminalReportsStart: boolean;
  /** Keys that interrupt a running turn in the TUI. */
  readonly terminalInterrupt: string;
  /** Translate a hook the relay posted. */
  readHook(event: string, payload: unknown): HookSignal;
  /** Find the conversation a TUI run used when no hook said (agents without hooks); null if unknown. */
  locateConversation?(ctx: ConversationContext & { since: number }): Promise<string | null>;
  createChatDriver(ctx: ConversationContext & { resume: boolean }): ChatDriver;
}
