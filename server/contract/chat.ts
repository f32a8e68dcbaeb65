/**
 * The chat end of a hybrid session, `/ws/s/{id}/chat` (docs/hybrid.md § `/ws/s/{id}/chat`): JSON
 * text frames, their types,
 * strict readers and the encoder/decoder pair, so no other module hand-builds them.
 * Pure: no node:, Bun or DOM.
 *
 * Journal events (snapshot, message, delta, status, turn, permission.*) carry a per-session
 * increasing `seq`; a client that reconnects with `since=<seq>` gets the events after it, or a
 * snapshot when they are no longer kept. `hello`, `submission`, `control` and `error` belong to
 * one connection and carry none.
 */

import { decodeJsonText } from "./json-text.ts";
import type { FrameError } from "./frames.ts";
import { PayloadError, readControllerInfo, readInteger, readObject } from "./payloads.ts";
import { MAX_QUERY_IDS, isValidSubmissionId } from "./protocol.ts";
import type { ControllerInfo, HybridEnd, HybridState, SubmissionError, SubmissionState } from "./types.ts";

/** Named in `hello`, so a client can tell a server speaking another version. */
export const CHAT_PROTOCOL = "webmux-chat/1";

export type ChatRole = "user" | "assistant" | "system";
export type ChatPart =
  | { type: "text"; text: string }
  | { type: "thinking"; text: string }
  | { type: "tool_call"; toolUseId: string; name: string; input: unknown }
  | { type: "tool_result"; toolUseId: string; content: string; isError: boolean }
  | { type: "image"; mediaType: string; data: string }
  /** what the agent or webmux says about the conversation (interrupted, compacted, a local command) */
  | { type: "service"; text: string };
export type ChatPartType = ChatPart["type"];

export type ChatMessage = {
  /** stable across the live stream and the transcript, so an upsert replaces what it names */
  id: string;
  role: ChatRole;
  parts: ChatPart[];
  /** ms since epoch */
  createdAt: number;
  /** the turn (the `send` id) that produced it, when it came from the chat end */
  turnId?: string;
};

export type ChatCaps = {
  /** the agent asks before using tools (permission.request); false: it refuses what needs approval */
  permissions: boolean;
  interrupt: boolean;
  /**
   * Present when the agent's chat end runs tools without asking, confined by its own sandbox
   * instead: what it may do, in words for the chat view (e.g. Codex: writes inside the workspace).
   */
  sandbox?: string;
};

export type ChatPermission = { requestId: string; tool: string; input: unknown; toolUseId?: string };
export type ChatStatus = { state: HybridState; error?: string; conversationId?: string };
/** A turn is running: its id and the message being streamed, if any. */
export type ChatInflight = { turnId: string; messageId: string | null };
export type TurnPhase = "start" | "end";
export type TurnStatus = "success" | "error" | "interrupted";
export type PermissionDecision = "allow" | "deny" | "canceled";
/** Who answered a permission request; null when webmux canceled it (interrupt, move, exit). */
export type PermissionAnswerer = { clientId: string; label: string } | null;

export type ChatHello = {
  type: "hello";
  protocol: string;
  sessionId: string;
  agent: string;
  conversationId: string;
  end: HybridEnd;
  caps: ChatCaps;
};

export type ChatJournalEvent =
  | { type: "snapshot"; seq: number; messages: ChatMessage[]; inflight?: ChatInflight; permissions: ChatPermission[]; status: ChatStatus }
  | { type: "message"; seq: number; message: ChatMessage }
  /** append `text` to `parts[part]` of the message (a text or thinking part an upsert created) */
  | { type: "delta"; seq: number; messageId: string; part: number; text: string }
  | ({ type: "status"; seq: number } & ChatStatus)
  | { type: "turn"; seq: number; turnId: string; phase: TurnPhase; status?: TurnStatus; costUsd?: number }
  | ({ type: "permission.request"; seq: number } & ChatPermission)
  | { type: "permission.resolved"; seq: number; requestId: string; decision: PermissionDecision; by: PermissionAnswerer };

/** Stable codes of a refused client frame (`error`). */
export type ChatErrorCode = "BUSY" | "INVALID_REQUEST" | "CAPABILITY_DENIED" | "CONFLICT" | "INTERNAL_ERROR";

export type ChatServerEvent =
  | ChatHello
  | ChatJournalEvent
  | { type: "submission"; id: string; state: SubmissionState; error?: SubmissionError }
  | { type: "control"; controller: ControllerInfo | null }
  /** a client frame the server refused (e.g. `move` while busy without `interrupt`) */
  | { type: "error"; code: ChatErrorCode; message: string };

export type ChatClientMessage =
  | { type: "send"; id: string; text: string }
  | { type: "query"; ids: string[] }
  | { type: "permission.respond"; requestId: string; decision: "allow" | "deny"; updatedInput?: unknown; message?: string }
  | { type: "interrupt" }
  | { type: "move"; to: HybridEnd; interrupt?: boolean }
  | { type: "resync" };

// ---- readers ----

type JsonObject = Record<string, unknown>;

const ROLES = ["user", "assistant", "system"] as const;
const ENDS = ["terminal", "chat"] as const;
const STATES = ["starting", "idle", "busy", "awaiting_permission", "moving", "parked"] as const;
const PHASES = ["start", "end"] as const;
const TURN_STATUSES = ["success", "error", "interrupted"] as const;
const DECISIONS = ["allow", "deny", "canceled"] as const;
const ANSWERS = ["allow", "deny"] as const;
const SUBMISSION_STATES = ["received", "written", "partial", "failed", "missing"] as const;
const SUBMISSION_ERRORS = ["generation", "invalid", "write"] as const;
const ERROR_CODES = ["BUSY", "INVALID_REQUEST", "CAPABILITY_DENIED", "CONFLICT", "INTERNAL_ERROR"] as const;

/** An optional field is present unless missing, undefined or null. */
function has(obj: JsonObject, key: string): boolean {
  return Object.hasOwn(obj, key) && obj[key] !== undefined && obj[key] !== null;
}

function at(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

function str(obj: JsonObject, key: string, path: string): string {
  const value = Object.hasOwn(obj, key) ? obj[key] : undefined;
  if (typeof value !== "string") throw new PayloadError(at(path, key), "a string");
  return value;
}

function bool(obj: JsonObject, key: string, path: string): boolean {
  const value = Object.hasOwn(obj, key) ? obj[key] : undefined;
  if (typeof value !== "boolean") throw new PayloadError(at(path, key), "a boolean");
  return value;
}

function oneOf<T extends string>(obj: JsonObject, key: string, path: string, values: readonly T[]): T {
  const value = Object.hasOwn(obj, key) ? obj[key] : undefined;
  if (!values.includes(value as T)) throw new PayloadError(at(path, key), `one of ${values.join(", ")}`);
  return value as T;
}

function seqOf(obj: JsonObject): number {
  return readInteger(obj, "seq", "", 0, Number.MAX_SAFE_INTEGER);
}

function list<T>(obj: JsonObject, key: string, path: string, read: (value: unknown, path: string) => T): T[] {
  const value = Object.hasOwn(obj, key) ? obj[key] : undefined;
  if (!Array.isArray(value)) throw new PayloadError(at(path, key), "an array");
  return value.map((item, i) => read(item, `${at(path, key)}[${i}]`));
}

/** Any JSON value (tool inputs); `undefined` is not JSON. */
function json(obj: JsonObject, key: string, path: string): unknown {
  if (!Object.hasOwn(obj, key) || obj[key] === undefined) throw new PayloadError(at(path, key), "a JSON value");
  return obj[key];
}

export function readChatPart(value: unknown, path = "part"): ChatPart {
  const obj = readObject(value, path);
  const type = oneOf(obj, "type", path, ["text", "thinking", "tool_call", "tool_result", "image", "service"] as const);
  switch (type) {
    case "text":
    case "thinking":
    case "service":
      return { type, text: str(obj, "text", path) };
    case "tool_call":
      return { type, toolUseId: str(obj, "toolUseId", path), name: str(obj, "name", path), input: json(obj, "input", path) };
    case "tool_result":
      return { type, toolUseId: str(obj, "toolUseId", path), content: str(obj, "content", path), isError: bool(obj, "isError", path) };
    case "image":
      return { type, mediaType: str(obj, "mediaType", path), data: str(obj, "data", path) };
  }
}

export function readChatMessage(value: unknown, path = "message"): ChatMessage {
  const obj = readObject(value, path);
  const message: ChatMessage = {
    id: str(obj, "id", path),
    role: oneOf(obj, "role", path, ROLES),
    parts: list(obj, "parts", path, readChatPart),
    createdAt: readInteger(obj, "createdAt", path, 0, Number.MAX_SAFE_INTEGER),
  };
  if (has(obj, "turnId")) message.turnId = str(obj, "turnId", path);
  return message;
}

function readPermission(value: unknown, path: string): ChatPermission {
  const obj = readObject(value, path);
  const permission: ChatPermission = { requestId: str(obj, "requestId", path), tool: str(obj, "tool", path), input: json(obj, "input", path) };
  if (has(obj, "toolUseId")) permission.toolUseId = str(obj, "toolUseId", path);
  return permission;
}

function readStatus(value: unknown, path: string): ChatStatus {
  const obj = readObject(value, path);
  const status: ChatStatus = { state: oneOf(obj, "state", path, STATES) };
  if (has(obj, "error")) status.error = str(obj, "error", path);
  if (has(obj, "conversationId")) status.conversationId = str(obj, "conversationId", path);
  return status;
}

function readAnswerer(obj: JsonObject): PermissionAnswerer {
  const by = Object.hasOwn(obj, "by") ? obj.by : undefined;
  return by === null ? null : readControllerInfoLike(by);
}

function readControllerInfoLike(value: unknown): { clientId: string; label: string } {
  const obj = readObject(value, "by");
  return { clientId: str(obj, "clientId", "by"), label: str(obj, "label", "by") };
}

export function readChatServerEvent(value: unknown): ChatServerEvent {
  const obj = readObject(value, "");
  const type = str(obj, "type", "");
  switch (type) {
    case "hello": {
      const caps = readObject(obj.caps, "caps");
      return {
        type,
        protocol: str(obj, "protocol", ""),
        sessionId: str(obj, "sessionId", ""),
        agent: str(obj, "agent", ""),
        conversationId: str(obj, "conversationId", ""),
        end: oneOf(obj, "end", "", ENDS),
        caps: {
          permissions: bool(caps, "permissions", "caps"),
          interrupt: bool(caps, "interrupt", "caps"),
          ...(has(caps, "sandbox") ? { sandbox: str(caps, "sandbox", "caps") } : {}),
        },
      };
    }
    case "snapshot": {
      const seq = seqOf(obj);
      const messages = list(obj, "messages", "", readChatMessage);
      let inflight: ChatInflight | undefined;
      if (has(obj, "inflight")) {
        const value = readObject(obj.inflight, "inflight");
        const messageId = Object.hasOwn(value, "messageId") ? value.messageId : undefined;
        inflight = { turnId: str(value, "turnId", "inflight"), messageId: messageId === null ? null : str(value, "messageId", "inflight") };
      }
      return {
        type,
        seq,
        messages,
        ...(inflight ? { inflight } : {}),
        permissions: list(obj, "permissions", "", readPermission),
        status: readStatus(obj.status, "status"),
      };
    }
    case "message":
      return { type, seq: seqOf(obj), message: readChatMessage(obj.message) };
    case "delta":
      return { type, seq: seqOf(obj), messageId: str(obj, "messageId", ""), part: readInteger(obj, "part", "", 0, Number.MAX_SAFE_INTEGER), text: str(obj, "text", "") };
    case "status":
      return { type, seq: seqOf(obj), ...readStatus(obj, "") };
    case "turn": {
      const turn: ChatJournalEvent = { type, seq: seqOf(obj), turnId: str(obj, "turnId", ""), phase: oneOf(obj, "phase", "", PHASES) };
      if (has(obj, "status")) turn.status = oneOf(obj, "status", "", TURN_STATUSES);
      if (has(obj, "costUsd")) {
        if (typeof obj.costUsd !== "number" || !Number.isFinite(obj.costUsd) || obj.costUsd < 0) throw new PayloadError("costUsd", "a non-negative number");
        turn.costUsd = obj.costUsd;
      }
      return turn;
    }
    case "permission.request":
      return { type, seq: seqOf(obj), ...readPermission(obj, "") };
    case "permission.resolved":
      return { type, seq: seqOf(obj), requestId: str(obj, "requestId", ""), decision: oneOf(obj, "decision", "", DECISIONS), by: readAnswerer(obj) };
    case "submission": {
      const submission: ChatServerEvent = { type, id: str(obj, "id", ""), state: oneOf(obj, "state", "", SUBMISSION_STATES) };
      if (has(obj, "error")) submission.error = oneOf(obj, "error", "", SUBMISSION_ERRORS);
      return submission;
    }
    case "control": {
      const controller = Object.hasOwn(obj, "controller") ? obj.controller : undefined;
      return { type, controller: controller === null ? null : readControllerInfo(controller) };
    }
    case "error":
      return { type, code: oneOf(obj, "code", "", ERROR_CODES), message: str(obj, "message", "") };
    default:
      throw new PayloadError("type", "a chat server event type");
  }
}

export function readChatClientMessage(value: unknown): ChatClientMessage {
  const obj = readObject(value, "");
  const type = str(obj, "type", "");
  switch (type) {
    case "send": {
      const id = obj.id;
      if (!isValidSubmissionId(id)) throw new PayloadError("id", "a submission ID [A-Za-z0-9_-]{8,64}");
      return { type, id, text: str(obj, "text", "") };
    }
    case "query": {
      const ids = obj.ids;
      if (!Array.isArray(ids) || ids.length > MAX_QUERY_IDS || !ids.every(isValidSubmissionId)) {
        throw new PayloadError("ids", `an array of at most ${MAX_QUERY_IDS} submission IDs`);
      }
      return { type, ids: [...ids] };
    }
    case "permission.respond": {
      const respond: ChatClientMessage = { type, requestId: str(obj, "requestId", ""), decision: oneOf(obj, "decision", "", ANSWERS) };
      if (has(obj, "updatedInput")) respond.updatedInput = obj.updatedInput;
      if (has(obj, "message")) respond.message = str(obj, "message", "");
      return respond;
    }
    case "interrupt":
    case "resync":
      return { type };
    case "move": {
      const move: ChatClientMessage = { type, to: oneOf(obj, "to", "", ENDS) };
      if (has(obj, "interrupt")) move.interrupt = bool(obj, "interrupt", "");
      return move;
    }
    default:
      throw new PayloadError("type", "a chat client message type");
  }
}

// ---- text frames ----

function decodeWith<T>(text: unknown, read: (value: unknown) => T): T | FrameError {
  return decodeJsonText(text, read, (value, invalid) => {
    // A `send` whose ID was readable is answered `failed: invalid`, as a terminal submission is.
    const obj = value as JsonObject;
    if (typeof value === "object" && value !== null && obj.type === "send" && isValidSubmissionId(obj.id)) invalid.id = obj.id;
  });
}

/** The text of one server event; throws PayloadError for an event that breaks the contract. */
export function encodeChatServerEvent(event: ChatServerEvent): string {
  return JSON.stringify(readChatServerEvent(event));
}

/** Parse one server event; never throws. */
export function decodeChatServerEvent(text: string): ChatServerEvent | FrameError {
  return decodeWith(text, readChatServerEvent);
}

/** The text of one client message; throws PayloadError for a message that breaks the contract. */
export function encodeChatClientMessage(message: ChatClientMessage): string {
  return JSON.stringify(readChatClientMessage(message));
}

/** Parse one client message; never throws. A bad `send` with a valid ID names it in `id`. */
export function decodeChatClientMessage(text: string): ChatClientMessage | FrameError {
  return decodeWith(text, readChatClientMessage);
}
