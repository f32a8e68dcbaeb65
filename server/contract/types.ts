/**
 * Every JSON payload that crosses the wire, shared by server, client and CLI.
 * Pure types and constants: no node:, Bun or DOM imports.
 * Described in docs/protocol.md, docs/agent-api.md and docs/hybrid.md.
 */

export type SessionStatus = "running" | "exited";

export type ControllerInfo = { clientId: string; label: string; since: number };

export type HybridEnd = "terminal" | "chat";
export type HybridState = "starting" | "idle" | "busy" | "awaiting_permission" | "moving" | "parked";
export type HybridInfo = {
  agent: string;
  conversationId: string;
  previousConversationIds: string[];
  end: HybridEnd;
  state: HybridState;
  error?: string;
};

export type SessionInfo = {
  /** [a-z0-9]{8} */
  id: string;
  /** user title, else the program's OSC 0/2 title, else the command */
  title: string;
  command: string[];
  /** from OSC 7 / shell integration when known */
  cwd: string | null;
  pid: number | null;
  status: SessionStatus;
  exitCode: number | null;
  /** unique across server restarts: `${bootId}.${n}` */
  generation: string;
  createdAt: number;
  updatedAt: number;
  cols: number;
  rows: number;
  controller: ControllerInfo | null;
  /** attached connections */
  clients: number;
  /** BEL, OSC 9 or OSC 777 notify since the last user input */
  attention: boolean;
  /** last ≤ 3 non-empty screen lines, plain text */
  preview: string[];
  /** present only for hybrid sessions (docs/hybrid.md) */
  hybrid?: HybridInfo | null;
};

// ---- /ws/sessions (text JSON frames) ----
export type SessionListEvent =
  | { type: "snapshot"; sessions: SessionInfo[] }
  | { type: "created"; session: SessionInfo }
  | { type: "updated"; session: SessionInfo }
  | { type: "removed"; id: string };

// ---- /ws/s/{id} JSON payloads (server → client) ----
export type ExitPayload = { exitCode: number };
export type PositionMode = "reset" | "append";
export type PositionPayload = {
  generation: string;
  mode: PositionMode;
  start: number;
  end: number;
  truncated: boolean;
};
export type SubmissionState = "received" | "written" | "partial" | "failed" | "missing";
export type SubmissionError = "generation" | "invalid" | "write";
export type SubmitStatusPayload = { id: string; state: SubmissionState; error?: SubmissionError };
export type ControlPayload = {
  controller: ControllerInfo | null;
  cols: number;
  rows: number;
  colorSchemeReports: boolean;
};

// ---- /ws/s/{id} JSON payloads (client → server) ----
export type ResizePayload = { cols: number; rows: number };
export type SubmitHeader = { id: string; generation: string; bodyBytes: number };
export type QuerySubmissionsPayload = { ids: string[] };

// ---- errors (HTTP and /ws/agent share one shape) ----
export const ErrorCode = {
  INVALID_REQUEST: "INVALID_REQUEST",
  UNAUTHORIZED: "UNAUTHORIZED",
  CAPABILITY_DENIED: "CAPABILITY_DENIED",
  NOT_FOUND: "NOT_FOUND",
  CONFLICT: "CONFLICT",
  BUSY: "BUSY",
  PAYLOAD_TOO_LARGE: "PAYLOAD_TOO_LARGE",
  RATE_LIMITED: "RATE_LIMITED",
  INTERNAL_ERROR: "INTERNAL_ERROR",
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];
export type ErrorBody = { error: { code: ErrorCode; message: string } };

/** The HTTP status each error code is answered with. */
export const ERROR_HTTP_STATUS: Record<ErrorCode, number> = {
  INVALID_REQUEST: 400,
  UNAUTHORIZED: 401,
  CAPABILITY_DENIED: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  BUSY: 409,
  PAYLOAD_TOO_LARGE: 413,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
};

// ---- HTTP API bodies ----
export type CreateSessionRequest = {
  command?: string[];
  cwd?: string;
  env?: Record<string, string>;
  cols?: number;
  rows?: number;
  title?: string;
};
export type RenameSessionRequest = { title: string };
export type SessionListResponse = { sessions: SessionInfo[] };

export type Settings = {
  open_api: { enabled: boolean };
};

// ---- /ws/settings (text JSON frames) ----
/** Sent on connect and after every change, so every open tab and device shows the same settings. */
export type SettingsEvent = { type: "settings"; settings: Settings };

// ---- Agent API ----
export type Capability = "terminal:read" | "terminal:write";
export const CAPABILITIES: readonly Capability[] = ["terminal:read", "terminal:write"];
export type TokenInfo = {
  id: string;
  name: string;
  capabilities: Capability[];
  created_at: number;
  expires_at: number | null;
  last_used_at: number | null;
};
export type CreateTokenRequest = { name: string; capabilities: Capability[]; expires_in?: number };
export type CreateTokenResponse = { token: string; token_info: TokenInfo };

export type RunMethod = "shell_integration" | "prompt_detection" | "timeout";
export type AgentRunRequest = {
  command: string;
  cwd?: string;
  env?: Record<string, string>;
  timeout?: number;
  pane_id?: string;
  strip_ansi?: boolean;
};
export type AgentRunResult = {
  exit_code: number | null;
  stdout: string;
  stderr: string;
  duration: number;
  pane_id: string;
  method: RunMethod;
};
/** `enter` (default true) presses Enter after the text. */
export type AgentSendRequest = { command: string; pane_id?: string; enter?: boolean };
export type AgentSendResponse = { ok: true; pane_id: string };
export type AgentReadResponse = {
  pane_id: string;
  lines: string[];
  scrollback?: string[];
  cursor: { row: number; col: number };
  cwd: string | null;
};

// ---- /ws/agent (text JSON frames) ----
export type AgentEventName = "command_started" | "command_finished" | "session_created" | "session_exited";
/** `data` always has `pane_id`; command_finished adds command, exit_code, duration_ms, stdout, method. */
export type AgentEvent = { event: AgentEventName; data: { pane_id: string } & Record<string, unknown> };
export type AgentRequestId = string | number;
export type AgentClientFrame =
  | ({ type: "run"; id?: AgentRequestId } & AgentRunRequest)
  | { type: "subscribe" }
  | { type: "ping"; id?: AgentRequestId };
export type AgentServerFrame =
  | ({ type: "result"; id?: AgentRequestId } & AgentRunResult)
  | { type: "event"; event: AgentEvent }
  | { type: "error"; id?: AgentRequestId; error: ErrorBody["error"] }
  | { type: "pong"; id?: AgentRequestId };
