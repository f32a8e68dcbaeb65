/**
 * What the chat page knows about a conversation, as a pure reducer over the contract's server
 * events (docs/protocol.md, Chat `/ws/s/{id}/chat`): a snapshot replaces everything, `message` upserts by
 * id (a new id joins the end), `delta` appends to a text or thinking part, permissions open and
 * resolve, `status`/`turn`/`control` update what the page shows. `lastSeq` is the `since` of the
 * next connect. The state is immutable: an event returns a new state, sharing what it did not
 * touch, so a view keyed on message and part objects redraws only what changed.
 */
import type {
  ChatCaps,
  ChatErrorCode,
  ChatHello,
  ChatInflight,
  ChatMessage,
  ChatPart,
  ChatPermission,
  ChatServerEvent,
  ChatStatus,
  PermissionAnswerer,
  PermissionDecision,
  TurnStatus,
} from "../../../server/contract/chat.ts";
import type { ControllerInfo } from "../../../server/contract/types.ts";
import { unreachable } from "../../../server/contract/unreachable.ts";

export type ResolvedPermission = ChatPermission & { decision: PermissionDecision; by: PermissionAnswerer };
export type TurnOutcome = { turnId: string; status?: TurnStatus; costUsd?: number };

export type ChatState = {
  hello: ChatHello | null;
  /** the last journal `seq` applied; null before the first snapshot */
  lastSeq: number | null;
  messages: readonly ChatMessage[];
  /** open permission requests, oldest first */
  permissions: readonly ChatPermission[];
  /** requests this page saw answered or canceled, by request id (a snapshot keeps them: history) */
  resolved: Readonly<Record<string, ResolvedPermission>>;
  status: ChatStatus | null;
  inflight: ChatInflight | null;
  /** how the last turn this page saw end ended */
  lastTurn: TurnOutcome | null;
  controller: ControllerInfo | null;
  /** the last client frame the server refused */
  refused: { code: ChatErrorCode; message: string } | null;
  /** an event named something this state does not hold: ask for a fresh snapshot (`resync`) */
  stale: boolean;
};

export const EMPTY_CHAT_STATE: ChatState = {
  hello: null,
  lastSeq: null,
  messages: [],
  permissions: [],
  resolved: {},
  status: null,
  inflight: null,
  lastTurn: null,
  controller: null,
  refused: null,
  stale: false,
};

/** The state after `event`. Journal events at or before `lastSeq` were applied already (a replay overlap) and change nothing. */
export function applyChatEvent(state: ChatState, event: ChatServerEvent): ChatState {
  if (event.type !== "snapshot" && "seq" in event && state.lastSeq !== null && event.seq <= state.lastSeq) return state;
  switch (event.type) {
    case "hello":
      return { ...state, hello: event, refused: null };
    case "control":
      return { ...state, controller: event.controller };
    case "error":
      return { ...state, refused: { code: event.code, message: event.message } };
    case "submission":
      // Submission states belong to the outbox (compose/outbox.ts), not the transcript.
      return state;
    case "snapshot":
      return {
        ...state,
        lastSeq: event.seq,
        messages: event.messages,
        permissions: event.permissions,
        status: event.status,
        inflight: event.inflight ?? null,
        stale: false,
      };
    case "message":
      return { ...state, lastSeq: event.seq, messages: upsert(state.messages, event.message) };
    case "delta": {
      const messages = appendDelta(state.messages, event.messageId, event.part, event.text);
      return messages ? { ...state, lastSeq: event.seq, messages } : { ...state, lastSeq: event.seq, stale: true };
    }
    case "status": {
      const { type: _type, seq, ...status } = event;
      return { ...state, lastSeq: seq, status };
    }
    case "turn":
      if (event.phase === "start") return { ...state, lastSeq: event.seq, inflight: { turnId: event.turnId, messageId: null } };
      return {
        ...state,
        lastSeq: event.seq,
        inflight: state.inflight?.turnId === event.turnId ? null : state.inflight,
        lastTurn: { turnId: event.turnId, ...(event.status ? { status: event.status } : {}), ...(event.costUsd !== undefined ? { costUsd: event.costUsd } : {}) },
      };
    case "permission.request": {
      const { type: _type, seq, ...permission } = event;
      const others = state.permissions.filter((p) => p.requestId !== permission.requestId);
      return { ...state, lastSeq: seq, permissions: [...others, permission] };
    }
    case "permission.resolved": {
      const open = state.permissions.find((p) => p.requestId === event.requestId);
      const resolved = open ? { ...state.resolved, [event.requestId]: { ...open, decision: event.decision, by: event.by } } : state.resolved;
      return { ...state, lastSeq: event.seq, permissions: state.permissions.filter((p) => p !== open), resolved };
    }
    default:
      return unreachable(event, "chat event");
  }
}

function upsert(messages: readonly ChatMessage[], message: ChatMessage): readonly ChatMessage[] {
  const at = messages.findIndex((m) => m.id === message.id);
  if (at === -1) return [...messages, message];
  const next = messages.slice();
  next[at] = message;
  return next;
}

/** The messages with `text` appended to one part, or null when that part is not a text or thinking part here. */
function appendDelta(messages: readonly ChatMessage[], messageId: string, index: number, text: string): readonly ChatMessage[] | null {
  const at = messages.findIndex((m) => m.id === messageId);
  const part = at === -1 ? undefined : messages[at]!.parts[index];
  if (!part || (part.type !== "text" && part.type !== "thinking")) return null;
  const parts: ChatPart[] = messages[at]!.parts.slice();
  parts[index] = { type: part.type, text: part.text + text };
  const next = messages.slice();
  next[at] = { ...messages[at]!, parts };
  return next;
}

// ---- what the page derives ----

/** A turn runs or the agent waits for an answer: show the busy indicator and Stop. */
export function isBusy(state: ChatState): boolean {
  const s = state.status?.state;
  return state.inflight !== null || s === "busy" || s === "awaiting_permission";
}

export function capsOf(state: ChatState): ChatCaps {
  return state.hello?.caps ?? { permissions: false, interrupt: false };
}

export type ToolResultPart = Extract<ChatPart, { type: "tool_result" }>;

/** Tool results by the tool call they answer: the view folds each into its call. */
export function toolResults(messages: readonly ChatMessage[]): Map<string, ToolResultPart> {
  const results = new Map<string, ToolResultPart>();
  for (const m of messages) for (const p of m.parts) if (p.type === "tool_result") results.set(p.toolUseId, p);
  return results;
}

/** The ids of tool calls present in the transcript: their results are shown inside them, not on their own. */
export function toolCallIds(messages: readonly ChatMessage[]): Set<string> {
  const ids = new Set<string>();
  for (const m of messages) for (const p of m.parts) if (p.type === "tool_call") ids.add(p.toolUseId);
  return ids;
}

/** The parts of a message the view draws on their own (results folded into a present call are not). */
export function shownParts(message: ChatMessage, calls: ReadonlySet<string>): ChatPart[] {
  return message.parts.filter((p) => p.type !== "tool_result" || !calls.has(p.toolUseId));
}
