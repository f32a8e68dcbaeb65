/**
 * The handover of a session host's sessions to a successor (docs/design.md, What survives a
 * restart): what the old host writes on the pipe its successor inherits, and what comes back.
 * The format is versioned apart from the host protocol (the two hosts speak different ones by
 * definition) and never changes meaning for a given HANDOVER_FORMAT; a successor reads every
 * format up to its own. Pure: no node: imports; the decoder never throws.
 *
 * Each message on the pipe: `u32 length (big-endian) · u32 JSON length · JSON · bytes`, where
 * `length` counts what follows it. Messages:
 *   old → new  `handover`: the document, with every ring's bytes (in session order) as its bytes
 *   new → old  `adopted` (it listens, with the sessions) or `failed` (it gave up; the old host goes on)
 *   old → new  `exit`: a handed-over program ended (the old host still waits for its children)
 */
import { decodeUtf8Strict, encodeUtf8 } from "../contract/utf8.ts";
import type { HostedSessionMeta, HostedSubmission } from "./hosted-sessions.ts";
import type { ShellState } from "./shell-marks.ts";

/** The version of the handover document and the pipe's messages. */
export const HANDOVER_FORMAT = 1;
/** The successor's descriptor of the pipe (after stdin, stdout, stderr). */
export const HANDOVER_CHANNEL_FD = 3;
/** The successor's first inherited master descriptor; the others follow. */
export const FIRST_HANDED_FD = 4;
const HEADER_BYTES = 8;
/** A message is at most this long: every ring of a full host fits (u32 length). */
export const MAX_HANDOVER_MESSAGE_BYTES = 0xffffffff - HEADER_BYTES;

/** One run handed over: where the successor finds its terminal and how far its output is. */
export type HandedRun = {
  ref: number;
  generation: string;
  pid: number;
  status: "running" | "exited";
  exitCode: number | null;
  bufferBytes: number;
  /** ring offsets; bytes [start, end) follow the previous runs' in the message's bytes */
  start: number;
  end: number;
  /** restores the terminal modes that output before `start` set */
  modes: string;
  /** the successor's descriptor of the master (null for an exited run) */
  fd: number | null;
  ptsName: string | null;
  /** the size the PTY itself has (the session's grid may differ) */
  ptyCols: number;
  ptyRows: number;
  pausedByServer: boolean;
  /** a shell with integration: where its marks say it is */
  shell: ShellState | null;
};

export type HandedSession = {
  meta: HostedSessionMeta;
  cols: number;
  rows: number;
  run: HandedRun | null;
  submissions: HostedSubmission[];
  /** a hybrid session's record (opaque to the host); absent from hosts before it was kept */
  hybrid?: Record<string, unknown> | null;
};

export type HandoverDocument = {
  type: "handover";
  format: number;
  from: { build: string; protocol: number; pid: number; hostId: string };
  sessions: HandedSession[];
};

export type HandoverMessage =
  | HandoverDocument
  | { type: "adopted"; pid: number }
  | { type: "failed"; message: string }
  | { type: "exit"; pid: number; exitCode: number; signal: number | null };

export function encodeHandoverMessage(message: HandoverMessage, bytes: Uint8Array = new Uint8Array(0)): Uint8Array[] {
  const json = encodeUtf8(JSON.stringify(message));
  const length = 4 + json.length + bytes.length;
  if (length > MAX_HANDOVER_MESSAGE_BYTES) throw new RangeError(`a handover message of ${length} bytes is too long`);
  const head = new Uint8Array(HEADER_BYTES);
  const view = new DataView(head.buffer);
  view.setUint32(0, length);
  view.setUint32(4, json.length);
  return bytes.length > 0 ? [head, json, bytes] : [head, json];
}

export type DecodedHandoverMessage = { message: HandoverMessage; bytes: Uint8Array } | { invalid: string };

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
const isString = (v: unknown): v is string => typeof v === "string";
const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
const isSize = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 0xffff;
const isEnv = (v: unknown): boolean => isRecord(v) && Object.values(v).every(isString);

function isMeta(v: unknown): v is HostedSessionMeta {
  return (
    isRecord(v) &&
    isString(v.id) &&
    Array.isArray(v.command) &&
    v.command.every(isString) &&
    isString(v.cwd) &&
    isEnv(v.env) &&
    Number.isFinite(v.createdAt) &&
    (v.title === null || isString(v.title)) &&
    typeof v.hybrid === "boolean"
  );
}

function isRun(v: unknown): v is HandedRun {
  return (
    isRecord(v) &&
    isCount(v.ref) &&
    isString(v.generation) &&
    isCount(v.pid) &&
    (v.status === "running" || v.status === "exited") &&
    (v.exitCode === null || Number.isInteger(v.exitCode)) &&
    isCount(v.bufferBytes) &&
    (v.bufferBytes as number) > 0 &&
    isCount(v.start) &&
    isCount(v.end) &&
    (v.start as number) <= (v.end as number) &&
    (v.end as number) - (v.start as number) <= (v.bufferBytes as number) &&
    isString(v.modes) &&
    (v.fd === null || (isCount(v.fd) && (v.fd as number) >= FIRST_HANDED_FD)) &&
    (v.status === "exited" || v.fd !== null) &&
    (v.ptsName === null || isString(v.ptsName)) &&
    isSize(v.ptyCols) &&
    isSize(v.ptyRows) &&
    typeof v.pausedByServer === "boolean" &&
    (v.shell === null || isShellState(v.shell))
  );
}

function isShellState(v: unknown): v is ShellState {
  return (
    isRecord(v) &&
    isString(v.nonce) &&
    (v.phase === "starting" || v.phase === "prompt" || v.phase === "running" || v.phase === "ended" || v.phase === "none") &&
    isString(v.command) &&
    Number.isFinite(v.startedAt)
  );
}

function isSubmission(v: unknown): v is HostedSubmission {
  return isRecord(v) && isString(v.id) && isString(v.clientId) && Number.isFinite(v.createdAt) && (v.state === "received" || v.state === "written" || v.state === "partial");
}

function isSession(v: unknown): v is HandedSession {
  return isRecord(v) && isMeta(v.meta) && isSize(v.cols) && isSize(v.rows) && (v.run === null || isRun(v.run)) && Array.isArray(v.submissions) && v.submissions.every(isSubmission) && (v.hybrid === undefined || v.hybrid === null || isRecord(v.hybrid));
}

function check(message: unknown, bytes: Uint8Array): string | null {
  if (!isRecord(message)) return "not an object";
  switch (message.type) {
    case "handover": {
      if (message.format !== HANDOVER_FORMAT) return `handover format ${String(message.format)}, this build reads ${HANDOVER_FORMAT}`;
      const from = message.from;
      if (!isRecord(from) || !isString(from.build) || !isCount(from.protocol) || !isCount(from.pid) || !isString(from.hostId)) return "bad from";
      if (!Array.isArray(message.sessions) || !message.sessions.every(isSession)) return "bad sessions";
      const sessions = message.sessions as HandedSession[];
      const total = sessions.reduce((n, s) => n + (s.run ? s.run.end - s.run.start : 0), 0);
      if (total !== bytes.length) return `the rings add up to ${total} bytes, the message has ${bytes.length}`;
      return null;
    }
    case "adopted":
      return isCount(message.pid) ? null : "bad pid";
    case "failed":
      return isString(message.message) ? null : "bad message";
    case "exit":
      return isCount(message.pid) && Number.isInteger(message.exitCode) && (message.signal === null || Number.isInteger(message.signal)) ? null : "bad exit";
    default:
      return `unknown message ${String(message.type)}`;
  }
}

/** Cuts the pipe's byte stream into messages and checks each one; chunks are copied once per message. */
export class HandoverReader {
  private chunks: Uint8Array[] = [];
  private buffered = 0;

  push(chunk: Uint8Array): DecodedHandoverMessage[] {
    if (chunk.length > 0) {
      this.chunks.push(chunk);
      this.buffered += chunk.length;
    }
    const out: DecodedHandoverMessage[] = [];
    for (;;) {
      if (this.buffered < 4) break;
      const head = this.peek(4);
      const length = new DataView(head.buffer, head.byteOffset, 4).getUint32(0);
      if (this.buffered < 4 + length) break;
      const whole = this.take(4 + length).subarray(4);
      out.push(decodeOne(whole));
    }
    return out;
  }

  private peek(n: number): Uint8Array {
    const first = this.chunks[0]!;
    if (first.length >= n) return first.subarray(0, n);
    const all = this.join();
    return all.subarray(0, n);
  }

  private join(): Uint8Array {
    if (this.chunks.length === 1) return this.chunks[0]!;
    const all = new Uint8Array(this.buffered);
    let at = 0;
    for (const c of this.chunks) {
      all.set(c, at);
      at += c.length;
    }
    this.chunks = [all];
    return all;
  }

  private take(n: number): Uint8Array {
    const all = this.join();
    const out = all.subarray(0, n);
    this.chunks = all.length > n ? [all.subarray(n)] : [];
    this.buffered -= n;
    return out;
  }
}

function decodeOne(body: Uint8Array): DecodedHandoverMessage {
  if (body.length < 4) return { invalid: "truncated" };
  const jsonLength = new DataView(body.buffer, body.byteOffset, 4).getUint32(0);
  if (4 + jsonLength > body.length) return { invalid: "truncated JSON" };
  const text = decodeUtf8Strict(body.subarray(4, 4 + jsonLength));
  if (text === null) return { invalid: "malformed UTF-8" };
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return { invalid: "malformed JSON" };
  }
  const bytes = body.subarray(4 + jsonLength);
  const problem = check(message, bytes);
  if (problem) return { invalid: problem };
  return { message: message as HandoverMessage, bytes };
}
