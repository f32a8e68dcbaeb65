/**
 * Close codes, limits, identifier patterns and small validators of the WebSocket
 * protocol (docs/protocol.md). Pure: no node:, Bun or DOM.
 */

/** WebSocket close codes of /ws/s/{id} and /ws/sessions. */
export const CloseCode = {
  /** policy violation: the connection's credential was revoked or expired, or agent tokens were shut out with the Agent API */
  POLICY: 1008,
  /** an internal message was invalid or could not be encoded; only this connection closes */
  INTERNAL: 1011,
  /** the session does not exist */
  NOT_FOUND: 4404,
  /** the client was too slow or a write timed out; reconnect at once and replay */
  TOO_SLOW: 4408,
  /** a hybrid session moved to its other end; terminal, do not reconnect */
  MOVED: 4409,
  /** the session's program exited (snapshot and exit frame were sent first) */
  EXITED: 4410,
} as const;
export type CloseCode = (typeof CloseCode)[keyof typeof CloseCode];

/** The reasons of a POLICY (1008) close, on every WebSocket path. */
export const PolicyCloseReason = {
  REVOKED: "credential revoked",
  EXPIRED: "credential expired",
  AGENT_API_DISABLED: "the Agent API is disabled",
  LOGGED_OUT: "logged out",
} as const;

// ---- limits ----

/** One 0x04 query names at most 64 submission IDs (docs/protocol.md § Submissions). */
export const MAX_QUERY_IDS = 64;
/** The most recent 256 submission records are kept per session (docs/protocol.md § Submissions). */
export const SUBMISSION_LOG_SIZE = 256;
/** Submission records are kept for 30 minutes (docs/protocol.md § Submissions). */
export const SUBMISSION_TTL_MS = 30 * 60 * 1000;
/** SessionInfo.preview holds at most this many non-empty screen lines (docs/protocol.md § HTTP API, SessionInfo). */
export const PREVIEW_LINES = 3;
/** Messages under 128 bytes stay uncompressed, deflate would only grow them (docs/protocol.md § Compression). */
export const COMPRESSION_THRESHOLD_BYTES = 128;
/** /ws/sessions sends `updated` at most once per 500 ms per session. */
export const SESSION_LIST_UPDATE_MS = 500;
/** …and at most once per 2 s when only the preview changed. */
export const SESSION_LIST_PREVIEW_MS = 2000;
/** Device labels are cut to 40 characters, code points (docs/protocol.md § Limits). */
export const MAX_LABEL_CHARS = 40;
/**
 * Largest client frame the server reads: covers any paste xterm delivers as one
 * input frame, while bounding the memory one frame of a hostile client can pin.
 */
export const MAX_CLIENT_FRAME_BYTES = 1024 * 1024;
/**
 * Largest submission body: far beyond any prompt or pasted file, and it bounds how
 * long one submission holds the PTY's input lock.
 */
export const MAX_SUBMISSION_BODY_BYTES = 256 * 1024;
/** Largest submit key: one key press or a short sequence (`\r`, `ESC [ 13 ; 2 u`); anything longer is not a key. */
export const MAX_SUBMIT_KEY_BYTES = 64;
/** The submit header's `\n` must appear this early: id (64) + generation (128) + a number + JSON keys fit with ample slack. */
export const MAX_SUBMIT_HEADER_BYTES = 1024;
/** Generations are `${bootId}.${n}`; 128 characters leave room for any boot ID format. */
export const MAX_GENERATION_LENGTH = 128;
/** xterm.js refuses fewer than 2 columns (a wide character needs two cells). */
export const MIN_COLS = 2;
/** xterm.js refuses fewer than 1 row. */
export const MIN_ROWS = 1;
/** Bounds the headless screen's memory; no real display shows more columns. */
export const MAX_COLS = 1000;
/** Bounds the headless screen's memory; no real display shows more rows. */
export const MAX_ROWS = 1000;
/**
 * Cells of a grid (columns × rows): a 4K display at a 6-pixel font is 640×180 = 115 200, so this
 * takes any real screen with room to spare, while it bounds each session's screen, and its
 * scrollback (as wide as the screen), to a quarter of what 1000×1000 would take.
 */
export const MAX_GRID_CELLS = 250_000;
/** Exit statuses are 0..255 on POSIX, but a runtime may report any int32 (e.g. -1 for unknown). */
export const MIN_EXIT_CODE = -(2 ** 31);
/** See MIN_EXIT_CODE. */
export const MAX_EXIT_CODE = 2 ** 31 - 1;

// ---- identifiers ----

const CLIENT_ID_PATTERN = /^[A-Za-z0-9_-]{8,64}$/;
const SESSION_ID_PATTERN = /^[a-z0-9]{8}$/;
const DECIMAL_PATTERN = /^[0-9]+$/;
/** C0 controls, DEL and C1 controls: Unicode general category Cc. */
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/g;

/** A tab's client ID: [A-Za-z0-9_-]{8,64}. */
export function isValidClientId(value: unknown): value is string {
  return typeof value === "string" && CLIENT_ID_PATTERN.test(value);
}

/** A submission ID: [A-Za-z0-9_-]{8,64}, the same alphabet as client IDs. */
export function isValidSubmissionId(value: unknown): value is string {
  return typeof value === "string" && CLIENT_ID_PATTERN.test(value);
}

/** A session ID: [a-z0-9]{8}. */
export function isValidSessionId(value: unknown): value is string {
  return typeof value === "string" && SESSION_ID_PATTERN.test(value);
}

/** A generation: a non-empty string of at most MAX_GENERATION_LENGTH UTF-16 units. */
export function isValidGeneration(value: unknown): value is string {
  return typeof value === "string" && value.length > 0 && value.length <= MAX_GENERATION_LENGTH;
}

/** A device label as shown: control characters removed, then cut to MAX_LABEL_CHARS code points. */
export function sanitizeLabel(raw: string | null | undefined): string {
  if (raw == null) return "";
  const visible = raw.replace(CONTROL_CHARACTERS, "");
  // Array.from splits by code point, so an astral character is never cut in half.
  const codePoints = Array.from(visible);
  return codePoints.length <= MAX_LABEL_CHARS ? visible : codePoints.slice(0, MAX_LABEL_CHARS).join("");
}

/** True when the label is already what sanitizeLabel would make of it. */
export function isValidLabel(value: unknown): value is string {
  return typeof value === "string" && sanitizeLabel(value) === value;
}

/** The `offset` query parameter: decimal digits only (no sign, exponent or hex), a safe integer; else null. */
export function parseOffset(raw: string | null | undefined): number | null {
  if (raw == null || !DECIMAL_PATTERN.test(raw)) return null;
  const value = Number(raw);
  return Number.isSafeInteger(value) ? value : null;
}

/** True for a terminal width the protocol accepts. */
export function isValidCols(value: unknown): value is number {
  return Number.isInteger(value) && (value as number) >= MIN_COLS && (value as number) <= MAX_COLS;
}

/** True for a terminal height the protocol accepts. */
export function isValidRows(value: unknown): value is number {
  return Number.isInteger(value) && (value as number) >= MIN_ROWS && (value as number) <= MAX_ROWS;
}

/** True for a grid the protocol accepts: each side in its range, and no more than MAX_GRID_CELLS cells. */
export function isValidGrid(cols: unknown, rows: unknown): boolean {
  return isValidCols(cols) && isValidRows(rows) && cols * rows <= MAX_GRID_CELLS;
}

/** The nearest grid the protocol accepts: each side clamped to its range, then rows cut to fit MAX_GRID_CELLS. */
export function clampGrid(cols: number, rows: number): { cols: number; rows: number } {
  const c = Math.min(MAX_COLS, Math.max(MIN_COLS, Math.floor(cols)));
  const r = Math.min(MAX_ROWS, Math.max(MIN_ROWS, Math.floor(rows)));
  return { cols: c, rows: Math.min(r, Math.floor(MAX_GRID_CELLS / c)) };
}

// ---- colour scheme (DEC private mode 2031) ----

/** The report a client sends as an auto-reply while mode 2031 is on: CSI ? 997 ; 1 n (dark) or ; 2 n (light). */
export function colorSchemeReport(dark: boolean): string {
  return dark ? "\x1b[?997;1n" : "\x1b[?997;2n";
}
