/**
 * Strict readers of the JSON payloads in ./types.ts. Each takes an `unknown`
 * (a JSON.parse result or an object about to be encoded) and returns a fresh
 * object holding only the known fields, or throws PayloadError naming the first
 * field that is wrong. Unknown extra fields are allowed and dropped; wrong types,
 * non-integers, out-of-range numbers and malformed IDs are rejected.
 *
 * The frame codec catches PayloadError, so its decoders never throw.
 */

import {
  MAX_EXIT_CODE,
  MAX_QUERY_IDS,
  MIN_EXIT_CODE,
  PREVIEW_LINES,
  isValidClientId,
  isValidCols,
  isValidGrid,
  MAX_GRID_CELLS,
  isValidGeneration,
  isValidLabel,
  isValidRows,
  isValidSessionId,
  isValidSubmissionId,
} from "./protocol.ts";
import type {
  ControlPayload,
  ControllerInfo,
  ExitPayload,
  HybridInfo,
  PositionPayload,
  QuerySubmissionsPayload,
  ResizePayload,
  SessionInfo,
  SessionListEvent,
  SubmitStatusPayload,
} from "./types.ts";

/** A JSON payload does not have the shape its frame type requires. */
export class PayloadError extends Error {
  readonly code = "INVALID_PAYLOAD";
  constructor(
    readonly field: string,
    readonly expected: string,
  ) {
    super(`${field}: expected ${expected}`);
    this.name = "PayloadError";
  }
}

type JsonObject = Record<string, unknown>;

/** Largest pid Linux can hand out is below 2^22; int32 covers every platform. */
const MAX_PID = 2 ** 31 - 1;

const SESSION_STATUSES = ["running", "exited"] as const;
const POSITION_MODES = ["reset", "append"] as const;
const SUBMISSION_STATES = ["received", "written", "partial", "failed", "missing"] as const;
const SUBMISSION_ERRORS = ["generation", "invalid", "write"] as const;
const HYBRID_ENDS = ["terminal", "chat"] as const;
const HYBRID_STATES = ["starting", "idle", "busy", "awaiting_permission", "moving", "parked"] as const;
const SESSION_LIST_EVENT_TYPES = ["snapshot", "created", "updated", "removed"] as const;

export function readObject(value: unknown, path: string): JsonObject {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new PayloadError(path || "payload", "an object");
  }
  return value as JsonObject;
}

/** Own properties only, so nothing is ever read from Object.prototype. */
function field(obj: JsonObject, key: string): unknown {
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

export function readInteger(obj: JsonObject, key: string, path: string, min: number, max: number): number {
  const value = field(obj, key);
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    throw new PayloadError(join(path, key), `an integer in ${min}..${max}`);
  }
  return value + 0; // -0 becomes 0, so a re-encoded payload reads back identical
}

function readCount(obj: JsonObject, key: string, path: string): number {
  return readInteger(obj, key, path, 0, Number.MAX_SAFE_INTEGER);
}

function readString(obj: JsonObject, key: string, path: string): string {
  const value = field(obj, key);
  if (typeof value !== "string") throw new PayloadError(join(path, key), "a string");
  return value;
}

function readChecked<T>(
  obj: JsonObject,
  key: string,
  path: string,
  isValid: (value: unknown) => value is T,
  expected: string,
): T {
  const value = field(obj, key);
  if (!isValid(value)) throw new PayloadError(join(path, key), expected);
  return value;
}

function readBoolean(obj: JsonObject, key: string, path: string): boolean {
  const value = field(obj, key);
  if (typeof value !== "boolean") throw new PayloadError(join(path, key), "a boolean");
  return value;
}

function readOneOf<T extends string>(obj: JsonObject, key: string, path: string, values: readonly T[]): T {
  const value = field(obj, key);
  if (!values.includes(value as T)) throw new PayloadError(join(path, key), `one of ${values.join(", ")}`);
  return value as T;
}

function readStringArray(
  obj: JsonObject,
  key: string,
  path: string,
  maxItems: number,
  isValid: (item: unknown) => boolean = (item) => typeof item === "string",
): string[] {
  const value = field(obj, key);
  if (!Array.isArray(value) || value.length > maxItems || !value.every(isValid)) {
    throw new PayloadError(join(path, key), `an array of at most ${maxItems} valid strings`);
  }
  return [...(value as string[])];
}

type FieldReader<T> = (obj: JsonObject, key: string, path: string) => T;

/** A required field that may be null (missing is still an error). */
function readNullable<T>(obj: JsonObject, key: string, path: string, read: FieldReader<T>): T | null {
  return field(obj, key) === null ? null : read(obj, key, path);
}

export function readControllerInfo(value: unknown, path = "controller"): ControllerInfo {
  const obj = readObject(value, path);
  return {
    clientId: readChecked(obj, "clientId", path, isValidClientId, "a client ID [A-Za-z0-9_-]{8,64}"),
    label: readChecked(obj, "label", path, isValidLabel, "a sanitized label"),
    since: readCount(obj, "since", path),
  };
}

function readController(obj: JsonObject, path: string): ControllerInfo | null {
  const value = field(obj, "controller");
  return value === null ? null : readControllerInfo(value, join(path, "controller"));
}

export function readHybridInfo(value: unknown, path = "hybrid"): HybridInfo {
  const obj = readObject(value, path);
  const hybrid: HybridInfo = {
    agent: readString(obj, "agent", path),
    conversationId: readString(obj, "conversationId", path),
    previousConversationIds: readStringArray(obj, "previousConversationIds", path, Number.MAX_SAFE_INTEGER),
    end: readOneOf(obj, "end", path, HYBRID_ENDS),
    state: readOneOf(obj, "state", path, HYBRID_STATES),
  };
  if (field(obj, "error") !== undefined) hybrid.error = readString(obj, "error", path);
  return hybrid;
}

export function readSessionInfo(value: unknown, path = ""): SessionInfo {
  const obj = readObject(value, path);
  const session: SessionInfo = {
    id: readChecked(obj, "id", path, isValidSessionId, "a session ID [a-z0-9]{8}"),
    title: readString(obj, "title", path),
    command: readStringArray(obj, "command", path, Number.MAX_SAFE_INTEGER),
    cwd: readNullable(obj, "cwd", path, readString),
    pid: readNullable(obj, "pid", path, (o, k, p) => readInteger(o, k, p, 1, MAX_PID)),
    status: readOneOf(obj, "status", path, SESSION_STATUSES),
    exitCode: readNullable(obj, "exitCode", path, (o, k, p) => readInteger(o, k, p, MIN_EXIT_CODE, MAX_EXIT_CODE)),
    generation: readChecked(obj, "generation", path, isValidGeneration, "a generation"),
    createdAt: readCount(obj, "createdAt", path),
    updatedAt: readCount(obj, "updatedAt", path),
    cols: readChecked(obj, "cols", path, isValidCols, "a column count"),
    rows: readChecked(obj, "rows", path, isValidRows, "a row count"),
    controller: readController(obj, path),
    clients: readCount(obj, "clients", path),
    attention: readBoolean(obj, "attention", path),
    preview: readStringArray(obj, "preview", path, PREVIEW_LINES),
  };
  const hybrid = field(obj, "hybrid");
  if (hybrid !== undefined) session.hybrid = hybrid === null ? null : readHybridInfo(hybrid, join(path, "hybrid"));
  return session;
}

export function readExitPayload(value: unknown): ExitPayload {
  const obj = readObject(value, "");
  return { exitCode: readInteger(obj, "exitCode", "", MIN_EXIT_CODE, MAX_EXIT_CODE) };
}

export function readPositionPayload(value: unknown): PositionPayload {
  const obj = readObject(value, "");
  const position: PositionPayload = {
    generation: readChecked(obj, "generation", "", isValidGeneration, "a generation"),
    mode: readOneOf(obj, "mode", "", POSITION_MODES),
    start: readCount(obj, "start", ""),
    end: readCount(obj, "end", ""),
    truncated: readBoolean(obj, "truncated", ""),
  };
  if (position.start > position.end) throw new PayloadError("start", "at most end");
  return position;
}

export function readSubmitStatusPayload(value: unknown): SubmitStatusPayload {
  const obj = readObject(value, "");
  const status: SubmitStatusPayload = {
    id: readChecked(obj, "id", "", isValidSubmissionId, "a submission ID [A-Za-z0-9_-]{8,64}"),
    state: readOneOf(obj, "state", "", SUBMISSION_STATES),
  };
  if (field(obj, "error") !== undefined) status.error = readOneOf(obj, "error", "", SUBMISSION_ERRORS);
  return status;
}

export function readControlPayload(value: unknown): ControlPayload {
  const obj = readObject(value, "");
  return {
    controller: readController(obj, ""),
    ...readSize(obj),
    colorSchemeReports: readBoolean(obj, "colorSchemeReports", ""),
  };
}

function readSize(obj: JsonObject): ResizePayload {
  const size = {
    cols: readChecked(obj, "cols", "", isValidCols, "a column count"),
    rows: readChecked(obj, "rows", "", isValidRows, "a row count"),
  };
  if (!isValidGrid(size.cols, size.rows)) throw new PayloadError("rows", `at most ${MAX_GRID_CELLS} cells (columns × rows)`);
  return size;
}

export function readResizePayload(value: unknown): ResizePayload {
  return readSize(readObject(value, ""));
}

export function readQuerySubmissionsPayload(value: unknown): QuerySubmissionsPayload {
  const obj = readObject(value, "");
  return { ids: readStringArray(obj, "ids", "", MAX_QUERY_IDS, isValidSubmissionId) };
}

export function readSessionListEvent(value: unknown): SessionListEvent {
  const obj = readObject(value, "");
  const type = readOneOf(obj, "type", "", SESSION_LIST_EVENT_TYPES);
  switch (type) {
    case "snapshot": {
      const sessions = field(obj, "sessions");
      if (!Array.isArray(sessions)) throw new PayloadError("sessions", "an array");
      return { type, sessions: sessions.map((s, i) => readSessionInfo(s, `sessions[${i}]`)) };
    }
    case "created":
    case "updated":
      return { type, session: readSessionInfo(field(obj, "session"), "session") };
    case "removed":
      return { type, id: readChecked(obj, "id", "", isValidSessionId, "a session ID [a-z0-9]{8}") };
  }
}
