/**
 * The binary frames of /ws/s/{id}: first byte the opcode, then the payload
 * (raw bytes, or UTF-8 JSON). The only place in the repo that builds or parses
 * them. Encoders throw FrameEncodeError for a payload the peer would reject
 * (the server answers that with close 1011); decoders never throw.
 */

import {
  MAX_CLIENT_FRAME_BYTES,
  MAX_SUBMISSION_BODY_BYTES,
  MAX_SUBMIT_HEADER_BYTES,
  MAX_SUBMIT_KEY_BYTES,
  isValidGeneration,
  isValidSubmissionId,
} from "./protocol.ts";
import {
  PayloadError,
  readControlPayload,
  readExitPayload,
  readInteger,
  readPositionPayload,
  readQuerySubmissionsPayload,
  readResizePayload,
  readSessionInfo,
  readSubmitStatusPayload,
} from "./payloads.ts";
import type {
  ControlPayload,
  ExitPayload,
  PositionPayload,
  QuerySubmissionsPayload,
  ResizePayload,
  SessionInfo,
  SubmitHeader,
  SubmitStatusPayload,
} from "./types.ts";
import { decodeUtf8Strict, encodeUtf8, toBytes } from "./utf8.ts";

/** Opcodes of server → client frames. */
export const ServerFrame = {
  OUTPUT: 0x00,
  SNAPSHOT: 0x01,
  STATUS: 0x02,
  EXIT: 0x03,
  POSITION: 0x04,
  SUBMIT_STATUS: 0x05,
  CONTROL: 0x06,
} as const;
export type ServerFrame = (typeof ServerFrame)[keyof typeof ServerFrame];

/** Opcodes of client → server frames. */
export const ClientFrame = {
  INPUT: 0x00,
  RESIZE: 0x01,
  RESYNC: 0x02,
  SUBMIT: 0x03,
  QUERY_SUBMISSIONS: 0x04,
  TAKE_CONTROL: 0x05,
  AUTO_REPLY: 0x06,
  /** docs/protocol.md, Client → server frames: the client has parsed one more replay (sent with `replayAck=1`) */
  REPLAY_PARSED: 0x07,
} as const;
export type ClientFrame = (typeof ClientFrame)[keyof typeof ClientFrame];

export type ServerMessage =
  | { type: "output"; data: Uint8Array }
  | { type: "snapshot"; data: Uint8Array }
  | { type: "status"; session: SessionInfo }
  | { type: "exit"; exitCode: number }
  | { type: "position"; position: PositionPayload }
  | { type: "submitStatus"; status: SubmitStatusPayload }
  | { type: "control"; control: ControlPayload };

export type ClientMessage =
  | { type: "input"; data: Uint8Array }
  | { type: "resize"; cols: number; rows: number }
  | { type: "resync" }
  | { type: "submit"; header: SubmitHeader; body: Uint8Array; submitKey: Uint8Array }
  | { type: "querySubmissions"; ids: string[] }
  | { type: "takeControl" }
  | { type: "autoReply"; data: Uint8Array }
  | { type: "replayParsed" };

/** Stable codes of why a frame was refused. */
export type FrameErrorReason =
  | "not_binary" // a terminal frame that is not a Uint8Array
  | "not_text" // a /ws/sessions message that is not a string
  | "empty" // no opcode byte
  | "unknown_opcode"
  | "too_large" // client frame over maxFrameBytes
  | "unexpected_payload" // bytes after an opcode that takes none
  | "bad_json" // payload is not UTF-8 JSON of an object
  | "bad_payload" // JSON of the wrong shape
  | "bad_header" // submit header missing, not JSON, or with a bad field
  | "body_too_large" // submit bodyBytes over maxSubmissionBodyBytes
  | "body_truncated" // submit bodyBytes beyond the end of the frame
  | "submit_key_too_large";

export type FrameError = {
  type: "invalid";
  reason: FrameErrorReason;
  /** for people and logs; not stable */
  detail: string;
  /** the opcode byte, when there was one */
  opcode?: number;
  /** a submit frame's submission ID, when the header was readable, so the server can answer `failed: invalid` */
  id?: string;
};

export type ClientFrameLimits = {
  /** default MAX_CLIENT_FRAME_BYTES */
  maxFrameBytes?: number;
  /** default MAX_SUBMISSION_BODY_BYTES */
  maxSubmissionBodyBytes?: number;
};

/** An encoder was given a payload that does not satisfy the contract. */
export class FrameEncodeError extends Error {
  readonly code = "FRAME_ENCODE";
  constructor(message: string) {
    super(message);
    this.name = "FrameEncodeError";
  }
}

const NEWLINE = 0x0a;

const opcodeName = (opcode: number): string => `0x${opcode.toString(16).padStart(2, "0")}`;

// ---- encoding ----

/**
 * Where a frame's memory comes from. Every byte of an output frame is written, so a caller that
 * encodes a flood may pass an allocator that does not zero it first (Node's `Buffer.allocUnsafe`):
 * zeroing each fresh 64 KiB frame was a few percent of the server's CPU per MiB of output.
 */
export type FrameAllocator = (bytes: number) => Uint8Array;
const zeroedFrame: FrameAllocator = (bytes) => new Uint8Array(bytes);

function frame(opcode: number, payload: Uint8Array, alloc: FrameAllocator = zeroedFrame): Uint8Array {
  const out = alloc(1 + payload.length);
  out[0] = opcode;
  out.set(payload, 1);
  return out;
}

function jsonFrame<T>(opcode: number, value: T, read: (value: unknown) => T): Uint8Array {
  let clean: T;
  try {
    clean = read(value);
  } catch (error) {
    if (!(error instanceof PayloadError)) throw error;
    throw new FrameEncodeError(`opcode ${opcodeName(opcode)}: ${error.message}`);
  }
  return frame(opcode, encodeUtf8(JSON.stringify(clean)));
}

export const encodeOutput = (data: Uint8Array | string, alloc?: FrameAllocator): Uint8Array => frame(ServerFrame.OUTPUT, toBytes(data), alloc);
/** One output frame from several chunks, copied once (the hub coalesces PTY reads per tick). */
export function encodeOutputChunks(chunks: readonly Uint8Array[], alloc: FrameAllocator = zeroedFrame): Uint8Array {
  let total = 0;
  for (const chunk of chunks) total += chunk.length;
  const out = alloc(1 + total);
  out[0] = ServerFrame.OUTPUT;
  let at = 1;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}
export const encodeSnapshot = (data: Uint8Array | string): Uint8Array => frame(ServerFrame.SNAPSHOT, toBytes(data));
export const encodeStatus = (session: SessionInfo): Uint8Array => jsonFrame(ServerFrame.STATUS, session, readSessionInfo);
export const encodeExit = (exit: ExitPayload): Uint8Array => jsonFrame(ServerFrame.EXIT, exit, readExitPayload);
export const encodePosition = (position: PositionPayload): Uint8Array =>
  jsonFrame(ServerFrame.POSITION, position, readPositionPayload);
export const encodeSubmitStatus = (status: SubmitStatusPayload): Uint8Array =>
  jsonFrame(ServerFrame.SUBMIT_STATUS, status, readSubmitStatusPayload);
export const encodeControl = (control: ControlPayload): Uint8Array =>
  jsonFrame(ServerFrame.CONTROL, control, readControlPayload);

export const encodeInput = (data: Uint8Array | string): Uint8Array => frame(ClientFrame.INPUT, toBytes(data));
export const encodeResize = (size: ResizePayload): Uint8Array => jsonFrame(ClientFrame.RESIZE, size, readResizePayload);
export const encodeResync = (): Uint8Array => frame(ClientFrame.RESYNC, new Uint8Array(0));
export const encodeQuerySubmissions = (query: QuerySubmissionsPayload): Uint8Array =>
  jsonFrame(ClientFrame.QUERY_SUBMISSIONS, query, readQuerySubmissionsPayload);
export const encodeTakeControl = (): Uint8Array => frame(ClientFrame.TAKE_CONTROL, new Uint8Array(0));
export const encodeAutoReply = (data: Uint8Array | string): Uint8Array => frame(ClientFrame.AUTO_REPLY, toBytes(data));
export const encodeReplayParsed = (): Uint8Array => frame(ClientFrame.REPLAY_PARSED, new Uint8Array(0));

/**
 * A submission: JSON header `{id, generation, bodyBytes}`, `\n`, the body, then
 * the submit key. bodyBytes counts the body only; it is computed here, and a
 * bodyBytes given in the header must agree with it.
 */
export function encodeSubmit(
  header: Omit<SubmitHeader, "bodyBytes"> & { bodyBytes?: number },
  body: Uint8Array | string,
  submitKey: Uint8Array | string,
): Uint8Array {
  const bodyBytes = toBytes(body);
  const keyBytes = toBytes(submitKey);
  if (!isValidSubmissionId(header.id)) throw new FrameEncodeError("submit: id is not a submission ID");
  if (!isValidGeneration(header.generation)) throw new FrameEncodeError("submit: generation is not valid");
  if (header.bodyBytes !== undefined && header.bodyBytes !== bodyBytes.length) {
    throw new FrameEncodeError(`submit: header says ${header.bodyBytes} body bytes, body has ${bodyBytes.length}`);
  }
  if (bodyBytes.length > MAX_SUBMISSION_BODY_BYTES) throw new FrameEncodeError("submit: body too large");
  if (keyBytes.length > MAX_SUBMIT_KEY_BYTES) throw new FrameEncodeError("submit: submit key too large");
  const headerBytes = encodeUtf8(
    JSON.stringify({ id: header.id, generation: header.generation, bodyBytes: bodyBytes.length }),
  );
  const out = new Uint8Array(1 + headerBytes.length + 1 + bodyBytes.length + keyBytes.length);
  out[0] = ClientFrame.SUBMIT;
  out.set(headerBytes, 1);
  out[1 + headerBytes.length] = NEWLINE;
  out.set(bodyBytes, 2 + headerBytes.length);
  out.set(keyBytes, 2 + headerBytes.length + bodyBytes.length);
  return out;
}

export function encodeServerMessage(message: ServerMessage): Uint8Array {
  switch (message.type) {
    case "output": return encodeOutput(message.data);
    case "snapshot": return encodeSnapshot(message.data);
    case "status": return encodeStatus(message.session);
    case "exit": return encodeExit({ exitCode: message.exitCode });
    case "position": return encodePosition(message.position);
    case "submitStatus": return encodeSubmitStatus(message.status);
    case "control": return encodeControl(message.control);
  }
}

export function encodeClientMessage(message: ClientMessage): Uint8Array {
  switch (message.type) {
    case "input": return encodeInput(message.data);
    case "resize": return encodeResize({ cols: message.cols, rows: message.rows });
    case "resync": return encodeResync();
    case "submit": return encodeSubmit(message.header, message.body, message.submitKey);
    case "querySubmissions": return encodeQuerySubmissions({ ids: message.ids });
    case "takeControl": return encodeTakeControl();
    case "autoReply": return encodeAutoReply(message.data);
    case "replayParsed": return encodeReplayParsed();
  }
}

// ---- decoding ----

function invalid(reason: FrameErrorReason, detail: string, opcode?: number, id?: string): FrameError {
  const error: FrameError = { type: "invalid", reason, detail };
  if (opcode !== undefined) error.opcode = opcode;
  if (id !== undefined) error.id = id;
  return error;
}

/** The JSON value of a payload, or why it is not one. */
function parseJson(payload: Uint8Array): { value: unknown } | { detail: string } {
  const text = decodeUtf8Strict(payload);
  if (text === null) return { detail: "is not UTF-8" };
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return { detail: "is not JSON" };
  }
}

const isJsonObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Decode a JSON object payload with a strict reader; failures become FrameError. */
function decodeJson<T, M>(
  opcode: number,
  payload: Uint8Array,
  read: (value: unknown) => T,
  wrap: (value: T) => M,
): M | FrameError {
  const parsed = parseJson(payload);
  if ("detail" in parsed) return invalid("bad_json", `payload ${parsed.detail}`, opcode);
  if (!isJsonObject(parsed.value)) return invalid("bad_json", "payload is not a JSON object", opcode);
  try {
    return wrap(read(parsed.value));
  } catch (error) {
    if (error instanceof PayloadError) return invalid("bad_payload", error.message, opcode);
    throw error;
  }
}

function decodeEmpty<M>(opcode: number, payload: Uint8Array, message: M): M | FrameError {
  return payload.length === 0 ? message : invalid("unexpected_payload", "this frame takes no payload", opcode);
}

function unknownOpcode(side: string, opcode: number): FrameError {
  return invalid("unknown_opcode", `unknown ${side} opcode ${opcodeName(opcode)}`, opcode);
}

/** Parse a server → client frame. Raw payloads are views into `data`, not copies. */
export function decodeServerFrame(data: Uint8Array): ServerMessage | FrameError {
  if (!(data instanceof Uint8Array)) return invalid("not_binary", "frame is not binary");
  if (data.length === 0) return invalid("empty", "frame has no opcode");
  const opcode = data[0];
  const payload = data.subarray(1);
  switch (opcode) {
    case ServerFrame.OUTPUT:
      return { type: "output", data: payload };
    case ServerFrame.SNAPSHOT:
      return { type: "snapshot", data: payload };
    case ServerFrame.STATUS:
      return decodeJson(opcode, payload, readSessionInfo, (session) => ({ type: "status", session }));
    case ServerFrame.EXIT:
      return decodeJson(opcode, payload, readExitPayload, ({ exitCode }) => ({ type: "exit", exitCode }));
    case ServerFrame.POSITION:
      return decodeJson(opcode, payload, readPositionPayload, (position) => ({ type: "position", position }));
    case ServerFrame.SUBMIT_STATUS:
      return decodeJson(opcode, payload, readSubmitStatusPayload, (status) => ({ type: "submitStatus", status }));
    case ServerFrame.CONTROL:
      return decodeJson(opcode, payload, readControlPayload, (control) => ({ type: "control", control }));
    default:
      return unknownOpcode("server", opcode);
  }
}

/** Parse a client → server frame. Raw payloads are views into `data`, not copies. */
export function decodeClientFrame(data: Uint8Array, limits: ClientFrameLimits = {}): ClientMessage | FrameError {
  if (!(data instanceof Uint8Array)) return invalid("not_binary", "frame is not binary");
  if (data.length === 0) return invalid("empty", "frame has no opcode");
  const maxFrameBytes = limits.maxFrameBytes ?? MAX_CLIENT_FRAME_BYTES;
  const opcode = data[0];
  const payload = data.subarray(1);
  // A submit frame reads its header first, so even an oversized one can be answered by ID.
  if (opcode === ClientFrame.SUBMIT) {
    return decodeSubmit(data, maxFrameBytes, limits.maxSubmissionBodyBytes ?? MAX_SUBMISSION_BODY_BYTES);
  }
  if (data.length > maxFrameBytes) return tooLarge(data, maxFrameBytes);
  switch (opcode) {
    case ClientFrame.INPUT:
      return { type: "input", data: payload };
    case ClientFrame.RESIZE:
      return decodeJson(opcode, payload, readResizePayload, ({ cols, rows }) => ({ type: "resize", cols, rows }));
    case ClientFrame.RESYNC:
      return decodeEmpty(opcode, payload, { type: "resync" });
    case ClientFrame.QUERY_SUBMISSIONS:
      return decodeJson(opcode, payload, readQuerySubmissionsPayload, ({ ids }) => ({ type: "querySubmissions", ids }));
    case ClientFrame.TAKE_CONTROL:
      return decodeEmpty(opcode, payload, { type: "takeControl" });
    case ClientFrame.AUTO_REPLY:
      return { type: "autoReply", data: payload };
    case ClientFrame.REPLAY_PARSED:
      return decodeEmpty(opcode, payload, { type: "replayParsed" });
    default:
      return unknownOpcode("client", opcode);
  }
}

function tooLarge(data: Uint8Array, maxFrameBytes: number, id?: string): FrameError {
  return invalid("too_large", `frame of ${data.length} bytes exceeds ${maxFrameBytes}`, data[0], id);
}

/** The submit header's fields in order, so every error after the ID carries it. */
function decodeSubmit(data: Uint8Array, maxFrameBytes: number, maxBodyBytes: number): ClientMessage | FrameError {
  const opcode = ClientFrame.SUBMIT;
  const payload = data.subarray(1);
  const newline = payload.subarray(0, MAX_SUBMIT_HEADER_BYTES + 1).indexOf(NEWLINE);
  if (newline < 0) return invalid("bad_header", `no newline in the first ${MAX_SUBMIT_HEADER_BYTES} bytes`, opcode);
  const parsed = parseJson(payload.subarray(0, newline));
  if ("detail" in parsed) return invalid("bad_header", `header ${parsed.detail}`, opcode);
  const header = parsed.value;
  if (!isJsonObject(header)) return invalid("bad_header", "header is not a JSON object", opcode);

  const id = Object.hasOwn(header, "id") ? header.id : undefined;
  if (!isValidSubmissionId(id)) return invalid("bad_header", "header.id is not a submission ID", opcode);
  const fail = (reason: FrameErrorReason, detail: string) => invalid(reason, detail, opcode, id);

  const generation = Object.hasOwn(header, "generation") ? header.generation : undefined;
  if (!isValidGeneration(generation)) return fail("bad_header", "header.generation is not a generation");
  let bodyBytes: number;
  try {
    bodyBytes = readInteger(header, "bodyBytes", "header", 0, Number.MAX_SAFE_INTEGER);
  } catch (error) {
    return fail("bad_header", error instanceof Error ? error.message : "header.bodyBytes is not valid");
  }
  if (data.length > maxFrameBytes) return tooLarge(data, maxFrameBytes, id);
  if (bodyBytes > maxBodyBytes) return fail("body_too_large", `body of ${bodyBytes} bytes exceeds ${maxBodyBytes}`);
  const rest = payload.subarray(newline + 1);
  if (bodyBytes > rest.length) return fail("body_truncated", `header says ${bodyBytes} body bytes, ${rest.length} follow`);
  const submitKey = rest.subarray(bodyBytes);
  if (submitKey.length > MAX_SUBMIT_KEY_BYTES) {
    return fail("submit_key_too_large", `submit key of ${submitKey.length} bytes exceeds ${MAX_SUBMIT_KEY_BYTES}`);
  }
  return { type: "submit", header: { id, generation, bodyBytes }, body: rest.subarray(0, bodyBytes), submitKey };
}
