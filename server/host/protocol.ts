/**
 * The frames between `webmux serve` and its session host over the host's Unix socket
 * (docs/design.md, What survives a restart). Pure: no node:, Bun or DOM imports, so both sides and the
 * tests share one codec. Decoders never throw; a frame they cannot read is `invalid`.
 *
 * Every frame is `u32 length (big-endian) · u8 type · body`, where `length` counts the type byte
 * and the body. The hot path is binary (OUTPUT, INPUT: a session's u32 reference and raw bytes);
 * the rest are a request, its reply and events, each a JSON value plus an optional binary tail
 * (`data`) for bytes that JSON would bloat (a replay, a submission's body).
 *
 * HELLO, WELCOME, REFUSED, HANDOVER and HANDED_OVER never change shape, in any protocol version:
 * they are how a server and a host of different versions find out that they differ, and how the
 * newer one asks the older one to hand its sessions over to a host of its own build.
 */
import { decodeUtf8Strict, encodeUtf8 } from "../contract/utf8.ts";

/** The version of everything after the hello. Bump it whenever a frame or method changes meaning. */
export const HOST_PROTOCOL = 1;

/** Bytes of the length prefix. */
export const FRAME_HEADER_BYTES = 4;
/**
 * A frame before the hello is accepted is at most this long: an unknown peer cannot make the host
 * buffer more. A handover request carries the successor's environment, hence more than a hello needs.
 */
export const MAX_HELLO_FRAME_BYTES = 256 * 1024;
/** Any frame after it: a replay of the largest ring (`--buffer-bytes` ≤ 1 GiB) plus its JSON. */
export const MAX_HOST_FRAME_BYTES = 1024 * 1024 * 1024 + 1024 * 1024;

export const HostFrame = {
  HELLO: 0x01,
  WELCOME: 0x02,
  REFUSED: 0x03,
  /** instead of a hello: hand every session over to a successor host that this command starts */
  HANDOVER: 0x04,
  /** the answer to HANDOVER when the successor holds the sessions (a failure is a REFUSED) */
  HANDED_OVER: 0x05,
  REQUEST: 0x10,
  REPLY: 0x11,
  EVENT: 0x12,
  /** host → server: a session's output */
  OUTPUT: 0x20,
  /** server → host: bytes for a session's program */
  INPUT: 0x21,
} as const;

/** Who is on the other end of a host connection. */
export const PeerRole = {
  /** `webmux serve`: keeps the host alive while connected; at most one at a time */
  SERVER: 0,
  /** a one-shot command (`webmux ls`, `webmux stop`): never keeps the host alive */
  COMMAND: 1,
} as const;
export type PeerRole = (typeof PeerRole)[keyof typeof PeerRole];

/** Why a host refused a hello. */
export const Refusal = {
  /** the secret did not match the one in the host's directory */
  SECRET: 1,
  /** the peer speaks another protocol version; `protocol` and `build` say which the host speaks */
  PROTOCOL: 2,
  /** another `webmux serve` is connected */
  BUSY: 3,
  /** the host is ending (after `webmux stop`) */
  ENDING: 4,
  /** a handover was asked for and could not be made; the message says why, the sessions stay */
  HANDOVER: 5,
} as const;
export type Refusal = (typeof Refusal)[keyof typeof Refusal];

/** INPUT flags. */
export const InputFlag = {
  /** a person typed it (not an auto-reply): clears attention and marks the session used */
  PERSON: 1,
} as const;

/** A change of mode 2031 inside an OUTPUT frame's bytes, at byte `at` (the state as of that byte). */
export type OutputMark = { at: number; on: boolean };

export type HostMessage =
  | { type: "hello"; protocol: number; build: string; secret: string; role: PeerRole; pid: number }
  | { type: "welcome"; protocol: number; build: string; pid: number; hostId: string; sessions: number; runtime: string }
  | { type: "refused"; reason: Refusal; protocol: number; build: string; message: string }
  | { type: "handover"; protocol: number; build: string; secret: string; pid: number; successor: SuccessorCommand }
  | { type: "handed-over"; pid: number; sessions: number; message: string }
  | { type: "request"; id: number; method: string; params: unknown; data: Uint8Array }
  | { type: "reply"; id: number; ok: boolean; result: unknown; data: Uint8Array }
  | { type: "event"; name: string; body: unknown; data: Uint8Array }
  | { type: "output"; ref: number; marks: OutputMark[]; data: Uint8Array }
  | { type: "input"; ref: number; flags: number; data: Uint8Array };

/** How the old host starts its successor: the new build's `webmux host`, as the new server runs it. */
export type SuccessorCommand = { argv: string[]; cwd: string; env: Record<string, string> };

export type DecodedHostFrame = HostMessage | { type: "invalid"; reason: string };

/** A message the encoder cannot represent (a string or JSON too long for its field). */
export class HostEncodeError extends Error {}

const EMPTY = new Uint8Array(0);
const U16_MAX = 0xffff;
const U32_MAX = 0xffffffff;

// ---- encoding ----

class Writer {
  private readonly parts: Uint8Array[] = [];
  private length = 0;

  u8(n: number): this {
    return this.push(Uint8Array.of(n & 0xff));
  }
  u16(n: number): this {
    if (!Number.isInteger(n) || n < 0 || n > U16_MAX) throw new HostEncodeError(`not a u16: ${n}`);
    return this.push(Uint8Array.of(n >>> 8, n & 0xff));
  }
  u32(n: number): this {
    if (!Number.isInteger(n) || n < 0 || n > U32_MAX) throw new HostEncodeError(`not a u32: ${n}`);
    const b = new Uint8Array(4);
    new DataView(b.buffer).setUint32(0, n);
    return this.push(b);
  }
  /** u16 length, then UTF-8 */
  shortText(s: string): this {
    const bytes = encodeUtf8(s);
    return this.u16(bytes.length).push(bytes);
  }
  /** u32 length, then the value as UTF-8 JSON (`undefined` is written as `null`) */
  json(value: unknown): this {
    const bytes = encodeUtf8(JSON.stringify(value ?? null));
    return this.u32(bytes.length).push(bytes);
  }
  push(bytes: Uint8Array): this {
    this.parts.push(bytes);
    this.length += bytes.length;
    return this;
  }
  /** The whole frame: length prefix, type, body, then `tail` (not copied when returned as parts). */
  frameParts(type: number, tail: Uint8Array = EMPTY): Uint8Array[] {
    const bodyLength = 1 + this.length + tail.length;
    if (bodyLength > MAX_HOST_FRAME_BYTES) throw new HostEncodeError(`frame of ${bodyLength} bytes is over the limit`);
    const head = new Uint8Array(FRAME_HEADER_BYTES + 1 + this.length);
    new DataView(head.buffer).setUint32(0, bodyLength);
    head[FRAME_HEADER_BYTES] = type;
    let at = FRAME_HEADER_BYTES + 1;
    for (const p of this.parts) {
      head.set(p, at);
      at += p.length;
    }
    return tail.length > 0 ? [head, tail] : [head];
  }
}

/**
 * A message as the pieces of one frame, in order: a header and, for messages with bytes, those
 * bytes themselves (so a socket can write them without copying them into the header).
 */
export function encodeHostFrameParts(message: HostMessage): Uint8Array[] {
  const w = new Writer();
  switch (message.type) {
    case "hello":
      return w.u16(message.protocol).shortText(message.build).shortText(message.secret).u8(message.role).u32(message.pid).frameParts(HostFrame.HELLO);
    case "welcome":
      return w
        .u16(message.protocol)
        .shortText(message.build)
        .u32(message.pid)
        .shortText(message.hostId)
        .u32(message.sessions)
        .shortText(message.runtime)
        .frameParts(HostFrame.WELCOME);
    case "refused":
      return w.u8(message.reason).u16(message.protocol).shortText(message.build).shortText(message.message).frameParts(HostFrame.REFUSED);
    case "handover":
      return w
        .u16(message.protocol)
        .shortText(message.build)
        .shortText(message.secret)
        .u32(message.pid)
        .json(message.successor)
        .frameParts(HostFrame.HANDOVER);
    case "handed-over":
      return w.u32(message.pid).u32(message.sessions).shortText(message.message).frameParts(HostFrame.HANDED_OVER);
    case "request":
      return w.u32(message.id).shortText(message.method).json(message.params).frameParts(HostFrame.REQUEST, message.data);
    case "reply":
      return w.u32(message.id).u8(message.ok ? 1 : 0).json(message.result).frameParts(HostFrame.REPLY, message.data);
    case "event":
      return w.shortText(message.name).json(message.body).frameParts(HostFrame.EVENT, message.data);
    case "output": {
      if (message.marks.length === 0) return hotFrameParts(HostFrame.OUTPUT, message.ref, -1, message.data);
      w.u32(message.ref).u16(message.marks.length);
      for (const mark of message.marks) w.u32(mark.at).u8(mark.on ? 1 : 0);
      return w.frameParts(HostFrame.OUTPUT, message.data);
    }
    case "input":
      return hotFrameParts(HostFrame.INPUT, message.ref, message.flags, message.data);
  }
}

/** Header bytes of an OUTPUT frame without marks and of an INPUT frame: length, type, ref, then u16 0 / u8 flags. */
const OUTPUT_HEADER_BYTES = FRAME_HEADER_BYTES + 1 + 4 + 2;
const INPUT_HEADER_BYTES = FRAME_HEADER_BYTES + 1 + 4 + 1;

/**
 * The frames of every keystroke and every PTY read (OUTPUT without marks, INPUT), written straight
 * into one header: the same bytes as the general writer, without its per-field allocations.
 * `flags` < 0 means OUTPUT (a zero mark count follows the ref instead of the flags byte).
 */
/**
 * One OUTPUT frame (no marks) whose bytes are `chunks` in order, as parts: the header, then the
 * chunks themselves, not joined (a batch for the server's mirror is written without a copy).
 */
export function encodeOutputFrameParts(ref: number, chunks: readonly Uint8Array[]): Uint8Array[] {
  let length = 0;
  for (const c of chunks) length += c.length;
  const [head] = hotFrameParts(HostFrame.OUTPUT, ref, -1, EMPTY, length);
  return [head!, ...chunks.filter((c) => c.length > 0)];
}

function hotFrameParts(type: number, ref: number, flags: number, data: Uint8Array, dataLength = data.length): Uint8Array[] {
  if (!Number.isInteger(ref) || ref < 0 || ref > U32_MAX) throw new HostEncodeError(`not a u32: ${ref}`);
  const output = flags < 0;
  const headerBytes = output ? OUTPUT_HEADER_BYTES : INPUT_HEADER_BYTES;
  const bodyLength = headerBytes - FRAME_HEADER_BYTES + dataLength;
  if (bodyLength > MAX_HOST_FRAME_BYTES) throw new HostEncodeError(`frame of ${bodyLength} bytes is over the limit`);
  const head = new Uint8Array(headerBytes);
  writeU32(head, 0, bodyLength);
  head[FRAME_HEADER_BYTES] = type;
  writeU32(head, FRAME_HEADER_BYTES + 1, ref);
  // OUTPUT: the u16 mark count stays 0; INPUT: the flags byte.
  if (!output) head[FRAME_HEADER_BYTES + 5] = flags & 0xff;
  return data.length > 0 ? [head, data] : [head];
}

function writeU32(bytes: Uint8Array, at: number, n: number): void {
  bytes[at] = n >>> 24;
  bytes[at + 1] = (n >>> 16) & 0xff;
  bytes[at + 2] = (n >>> 8) & 0xff;
  bytes[at + 3] = n & 0xff;
}

/** A message as one contiguous frame (tests, and messages too small to be worth two writes). */
export function encodeHostFrame(message: HostMessage): Uint8Array {
  const parts = encodeHostFrameParts(message);
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

// ---- decoding ----

class Reader {
  private at = 0;
  private readonly view: DataView;
  constructor(private readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  private need(n: number): void {
    if (this.at + n > this.bytes.length) throw new ReadError("truncated");
  }
  u8(): number {
    this.need(1);
    return this.bytes[this.at++]!;
  }
  u16(): number {
    this.need(2);
    const n = this.view.getUint16(this.at);
    this.at += 2;
    return n;
  }
  u32(): number {
    this.need(4);
    const n = this.view.getUint32(this.at);
    this.at += 4;
    return n;
  }
  private utf8(length: number): string {
    this.need(length);
    const text = decodeUtf8Strict(this.bytes.subarray(this.at, this.at + length));
    if (text === null) throw new ReadError("malformed UTF-8");
    this.at += length;
    return text;
  }
  shortText(): string {
    return this.utf8(this.u16());
  }
  json(): unknown {
    const text = this.utf8(this.u32());
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new ReadError("malformed JSON");
    }
  }
  /** The remaining bytes, not copied. */
  rest(): Uint8Array {
    const out = this.bytes.subarray(this.at);
    this.at = this.bytes.length;
    return out;
  }
  end(): void {
    if (this.at !== this.bytes.length) throw new ReadError("trailing bytes");
  }
}

class ReadError extends Error {}

function isSuccessorCommand(value: unknown): value is SuccessorCommand {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const v = value as Record<string, unknown>;
  const env = v.env;
  return (
    Array.isArray(v.argv) &&
    v.argv.length > 0 &&
    v.argv.every((a) => typeof a === "string") &&
    typeof v.cwd === "string" &&
    typeof env === "object" &&
    env !== null &&
    !Array.isArray(env) &&
    Object.values(env).every((x) => typeof x === "string")
  );
}

/** One frame's type byte and body (without the length prefix). */
export function decodeHostFrame(frame: Uint8Array): DecodedHostFrame {
  if (frame.length < 1) return { type: "invalid", reason: "empty frame" };
  const hot = decodeHotFrame(frame);
  if (hot) return hot;
  const r = new Reader(frame.subarray(1));
  try {
    const message = readMessage(frame[0]!, r);
    return message ?? { type: "invalid", reason: `unknown frame type 0x${frame[0]!.toString(16).padStart(2, "0")}` };
  } catch (err) {
    if (err instanceof ReadError) return { type: "invalid", reason: err.message };
    throw err;
  }
}

/**
 * Every keystroke and PTY read (INPUT, OUTPUT without marks) read straight off the bytes, without
 * a Reader; null for anything else (which the general reader then decodes, errors included).
 */
function decodeHotFrame(frame: Uint8Array): HostMessage | null {
  const type = frame[0];
  if (type === HostFrame.INPUT && frame.length >= 6) {
    return { type: "input", ref: readU32(frame, 1), flags: frame[5]!, data: frame.subarray(6) };
  }
  if (type === HostFrame.OUTPUT && frame.length >= 7 && frame[5] === 0 && frame[6] === 0) {
    return { type: "output", ref: readU32(frame, 1), marks: [], data: frame.subarray(7) };
  }
  return null;
}

function readU32(bytes: Uint8Array, at: number): number {
  return ((bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!) >>> 0;
}

function readMessage(type: number, r: Reader): HostMessage | null {
  switch (type) {
    case HostFrame.HELLO: {
      const message = { type: "hello", protocol: r.u16(), build: r.shortText(), secret: r.shortText(), role: r.u8(), pid: r.u32() } as const;
      r.end();
      if (message.role !== PeerRole.SERVER && message.role !== PeerRole.COMMAND) throw new ReadError(`unknown role ${message.role}`);
      return message as HostMessage;
    }
    case HostFrame.WELCOME: {
      const message: HostMessage = { type: "welcome", protocol: r.u16(), build: r.shortText(), pid: r.u32(), hostId: r.shortText(), sessions: r.u32(), runtime: r.shortText() };
      r.end();
      return message;
    }
    case HostFrame.REFUSED: {
      const message = { type: "refused", reason: r.u8() as Refusal, protocol: r.u16(), build: r.shortText(), message: r.shortText() } as const;
      r.end();
      return message;
    }
    case HostFrame.HANDOVER: {
      const protocol = r.u16();
      const build = r.shortText();
      const secret = r.shortText();
      const pid = r.u32();
      const successor = r.json();
      r.end();
      if (!isSuccessorCommand(successor)) throw new ReadError("bad successor command");
      return { type: "handover", protocol, build, secret, pid, successor };
    }
    case HostFrame.HANDED_OVER: {
      const message: HostMessage = { type: "handed-over", pid: r.u32(), sessions: r.u32(), message: r.shortText() };
      r.end();
      return message;
    }
    case HostFrame.REQUEST:
      return { type: "request", id: r.u32(), method: r.shortText(), params: r.json(), data: r.rest() };
    case HostFrame.REPLY: {
      const id = r.u32();
      const ok = r.u8();
      if (ok > 1) throw new ReadError("reply status must be 0 or 1");
      return { type: "reply", id, ok: ok === 1, result: r.json(), data: r.rest() };
    }
    case HostFrame.EVENT:
      return { type: "event", name: r.shortText(), body: r.json(), data: r.rest() };
    case HostFrame.OUTPUT: {
      const ref = r.u32();
      const count = r.u16();
      const marks: OutputMark[] = [];
      for (let i = 0; i < count; i++) marks.push({ at: r.u32(), on: r.u8() === 1 });
      const data = r.rest();
      if (marks.some((m, i) => m.at > data.length || (i > 0 && m.at < marks[i - 1]!.at))) throw new ReadError("output mark out of order or past the data");
      return { type: "output", ref, marks, data };
    }
    case HostFrame.INPUT:
      return { type: "input", ref: r.u32(), flags: r.u8(), data: r.rest() };
    default:
      return null;
  }
}

/** What both frame readers share: the frame size accepted, and whether a frame over it ended the stream. */
abstract class LimitedFrameReader {
  protected failed = false;

  constructor(protected limit: number = MAX_HELLO_FRAME_BYTES) {}

  /** Raise (or lower) the frame size accepted from now on: after the hello, to the full limit. */
  setLimit(limit: number): void {
    this.limit = limit;
  }

  get overLimit(): boolean {
    return this.failed;
  }
}

/**
 * Cuts a byte stream into frames. A frame inside one chunk is returned as a view of it (no copy);
 * one spread over several chunks is joined once. A length over the current limit makes the
 * stream unreadable for good (`overLimit`): the connection must be closed.
 */
export class HostFrameReader extends LimitedFrameReader {
  private chunks: Uint8Array[] = [];
  private buffered = 0;

  /** The complete frames (type byte and body) the chunk finished, in order. */
  push(chunk: Uint8Array): Uint8Array[] {
    if (this.failed) return [];
    if (chunk.length > 0) {
      this.chunks.push(chunk);
      this.buffered += chunk.length;
    }
    const frames: Uint8Array[] = [];
    for (;;) {
      if (this.buffered < FRAME_HEADER_BYTES) break;
      const length = this.peekLength();
      if (length > this.limit || length < 1) {
        this.failed = true;
        this.chunks = [];
        this.buffered = 0;
        break;
      }
      if (this.buffered < FRAME_HEADER_BYTES + length) break;
      this.take(FRAME_HEADER_BYTES);
      frames.push(this.take(length));
    }
    return frames;
  }

  private peekLength(): number {
    const first = this.chunks[0]!;
    if (first.length >= FRAME_HEADER_BYTES) return readU32(first, 0);
    const head = new Uint8Array(FRAME_HEADER_BYTES);
    let at = 0;
    for (const c of this.chunks) {
      const n = Math.min(c.length, FRAME_HEADER_BYTES - at);
      head.set(c.subarray(0, n), at);
      at += n;
      if (at === FRAME_HEADER_BYTES) break;
    }
    return new DataView(head.buffer).getUint32(0);
  }

  /** The next `n` buffered bytes (n ≤ buffered). */
  private take(n: number): Uint8Array {
    this.buffered -= n;
    const first = this.chunks[0]!;
    if (first.length > n) {
      this.chunks[0] = first.subarray(n);
      return first.subarray(0, n);
    }
    if (first.length === n) {
      this.chunks.shift();
      return first;
    }
    const out = new Uint8Array(n);
    let at = 0;
    while (at < n) {
      const c = this.chunks[0]!;
      const k = Math.min(c.length, n - at);
      out.set(c.subarray(0, k), at);
      at += k;
      if (k === c.length) this.chunks.shift();
      else this.chunks[0] = c.subarray(k);
    }
    return out;
  }
}

/** A lending reader's first assembly buffer: a socket read's worth. */
const MIN_ASSEMBLY_BYTES = 64 * 1024;
/** A lending reader keeps its assembly buffer between frames up to this size; a larger one is let go after its frame. */
export const KEPT_ASSEMBLY_BYTES = 1024 * 1024;

/**
 * HostFrameReader for a socket that lends its reads (own-read-buffer.ts): each chunk is valid
 * only during `push`, and each frame handed to `onFrame` only until `onFrame` returns. A frame
 * inside the chunk is a view of it; one spread over chunks is joined in one assembly buffer that is
 * reused for the next (docs/design.md § The session host serves the streams): a flood of OUTPUT
 * batches then costs no fresh memory per frame and no garbage per read. `onFrame` returns false to
 * stop reading the chunk (the socket was closed). A length over the limit fails for good, as there.
 */
export class LentHostFrameReader extends LimitedFrameReader {
  private assembly: Uint8Array = EMPTY;
  /** bytes of an unfinished frame (its length prefix included) held in `assembly` */
  private held = 0;

  push(chunk: Uint8Array, onFrame: (frame: Uint8Array) => boolean): void {
    let at = 0;
    while (!this.failed) {
      if (this.held > 0) {
        // The rest of a frame begun in an earlier chunk.
        if (this.held < FRAME_HEADER_BYTES) {
          at += this.hold(chunk.subarray(at, at + FRAME_HEADER_BYTES - this.held), FRAME_HEADER_BYTES);
          if (this.held < FRAME_HEADER_BYTES) return;
        }
        const total = this.frameBytes(readU32(this.assembly, 0));
        if (total === 0) return;
        at += this.hold(chunk.subarray(at, at + total - this.held), total);
        if (this.held < total) return;
        this.held = 0;
        const more = onFrame(this.assembly.subarray(FRAME_HEADER_BYTES, total));
        if (this.assembly.length > KEPT_ASSEMBLY_BYTES) this.assembly = EMPTY;
        if (!more) return;
        continue;
      }
      const left = chunk.length - at;
      if (left === 0) return;
      if (left < FRAME_HEADER_BYTES) {
        this.hold(chunk.subarray(at), FRAME_HEADER_BYTES);
        return;
      }
      const total = this.frameBytes(readU32(chunk, at));
      if (total === 0) return;
      if (left < total) {
        this.hold(chunk.subarray(at), total);
        return;
      }
      if (!onFrame(chunk.subarray(at + FRAME_HEADER_BYTES, at + total))) return;
      at += total;
    }
  }

  /** A frame's bytes with its prefix, or 0 (and failed for good) for a length over the limit or none. */
  private frameBytes(length: number): number {
    if (length > this.limit || length < 1) {
      this.failed = true;
      this.held = 0;
      this.assembly = EMPTY;
      return 0;
    }
    return FRAME_HEADER_BYTES + length;
  }

  /**
   * Append `bytes` to the held frame of `total` bytes; returns how many were taken. The buffer grows
   * with what arrived, not with what the prefix announced: a peer that names a large frame and sends
   * little of it holds little.
   */
  private hold(bytes: Uint8Array, total: number): number {
    const needed = this.held + bytes.length;
    if (this.assembly.length < needed) {
      const grown = new Uint8Array(Math.min(total, Math.max(needed, this.assembly.length * 2, MIN_ASSEMBLY_BYTES)));
      grown.set(this.assembly.subarray(0, this.held));
      this.assembly = grown;
    }
    this.assembly.set(bytes, this.held);
    this.held += bytes.length;
    return bytes.length;
  }
}
