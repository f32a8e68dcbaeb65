import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { asciiHex, hex, toHex } from "../testing/hex.ts";
import {
  decodeHostFrame,
  encodeHostFrame,
  encodeHostFrameParts,
  encodeOutputFrameParts,
  FRAME_HEADER_BYTES,
  HostEncodeError,
  HostFrameReader,
  KEPT_ASSEMBLY_BYTES,
  LentHostFrameReader,
  MAX_HELLO_FRAME_BYTES,
  PeerRole,
  Refusal,
  type HostMessage,
} from "./protocol.ts";

/** The frame without its length prefix, as decodeHostFrame takes it. */
const body = (frame: Uint8Array) => frame.subarray(FRAME_HEADER_BYTES);

describe("host protocol: byte vectors", () => {
  it("hello: protocol, build, secret, role, pid", () => {
    const frame = encodeHostFrame({ type: "hello", protocol: 1, build: "b1", secret: "s3", role: PeerRole.SERVER, pid: 258 });
    expect(toHex(frame)).toBe(`00 00 00 10 01 00 01 00 02 ${asciiHex("b1")} 00 02 ${asciiHex("s3")} 00 00 00 01 02`);
    expect(decodeHostFrame(body(frame))).toEqual({ type: "hello", protocol: 1, build: "b1", secret: "s3", role: 0, pid: 258 });
  });

  it("welcome and refused", () => {
    const welcome = encodeHostFrame({ type: "welcome", protocol: 1, build: "b", pid: 7, hostId: "h", sessions: 3, runtime: "node" });
    expect(toHex(welcome)).toBe(`00 00 00 17 02 00 01 00 01 62 00 00 00 07 00 01 68 00 00 00 03 00 04 ${asciiHex("node")}`);
    const refused = encodeHostFrame({ type: "refused", reason: Refusal.PROTOCOL, protocol: 2, build: "x", message: "no" });
    expect(toHex(refused)).toBe(`00 00 00 0b 03 02 00 02 00 01 78 00 02 ${asciiHex("no")}`);
    expect(decodeHostFrame(body(refused))).toEqual({ type: "refused", reason: 2, protocol: 2, build: "x", message: "no" });
  });

  it("handover and handed-over: the frames a build of another protocol asks for the sessions with", () => {
    const successor = { argv: ["node", "w"], cwd: "/", env: { A: "1" } };
    const json = JSON.stringify(successor);
    const handover = encodeHostFrame({ type: "handover", protocol: 2, build: "b", secret: "s", pid: 3, successor });
    expect(toHex(handover)).toBe(
      `00 00 00 ${(1 + 2 + 3 + 3 + 4 + 4 + json.length).toString(16).padStart(2, "0")} 04 00 02 00 01 62 00 01 73 00 00 00 03 00 00 00 ${json.length.toString(16).padStart(2, "0")} ${asciiHex(json)}`,
    );
    expect(decodeHostFrame(body(handover))).toEqual({ type: "handover", protocol: 2, build: "b", secret: "s", pid: 3, successor });
    const bad = encodeHostFrame({ type: "handover", protocol: 2, build: "b", secret: "s", pid: 3, successor: { argv: [], cwd: "/", env: {} } });
    expect(decodeHostFrame(body(bad))).toEqual({ type: "invalid", reason: "bad successor command" });
    const handed = encodeHostFrame({ type: "handed-over", pid: 9, sessions: 2, message: "" });
    expect(toHex(handed)).toBe("00 00 00 0b 05 00 00 00 09 00 00 00 02 00 00");
    expect(decodeHostFrame(body(handed))).toEqual({ type: "handed-over", pid: 9, sessions: 2, message: "" });
  });

  it("request: id, method, JSON params, then raw data", () => {
    const frame = encodeHostFrame({ type: "request", id: 5, method: "ls", params: { a: 1 }, data: hex("ff 00") });
    expect(toHex(frame)).toBe(`00 00 00 16 10 00 00 00 05 00 02 ${asciiHex("ls")} 00 00 00 07 ${asciiHex('{"a":1}')} ff 00`);
    expect(decodeHostFrame(body(frame))).toEqual({ type: "request", id: 5, method: "ls", params: { a: 1 }, data: hex("ff 00") });
  });

  it("reply and event; undefined JSON travels as null", () => {
    const reply = encodeHostFrame({ type: "reply", id: 1, ok: false, result: undefined, data: new Uint8Array(0) });
    expect(toHex(reply)).toBe(`00 00 00 0e 11 00 00 00 01 00 00 00 00 04 ${asciiHex("null")}`);
    expect(decodeHostFrame(body(reply))).toEqual({ type: "reply", id: 1, ok: false, result: null, data: new Uint8Array(0) });
    const event = encodeHostFrame({ type: "event", name: "x", body: [], data: hex("01") });
    expect(toHex(event)).toBe(`00 00 00 0b 12 00 01 78 00 00 00 02 ${asciiHex("[]")} 01`);
  });

  it("output: session reference, 2031 marks at byte positions, then the bytes", () => {
    const frame = encodeHostFrame({ type: "output", ref: 9, marks: [{ at: 1, on: true }, { at: 2, on: false }], data: hex("61 62 63") });
    expect(toHex(frame)).toBe("00 00 00 14 20 00 00 00 09 00 02 00 00 00 01 01 00 00 00 02 00 61 62 63");
    expect(decodeHostFrame(body(frame))).toEqual({ type: "output", ref: 9, marks: [{ at: 1, on: true }, { at: 2, on: false }], data: hex("61 62 63") });
  });

  it("input: session reference, flags, bytes", () => {
    const frame = encodeHostFrame({ type: "input", ref: 1, flags: 1, data: hex("0d") });
    expect(toHex(frame)).toBe("00 00 00 07 21 00 00 00 01 01 0d");
  });

  it("the hot frames (INPUT, OUTPUT without marks) round-trip at the edges of their fields", () => {
    for (const ref of [0, 1, 0x7fffffff, 0x80000000, 0xffffffff]) {
      const input = { type: "input", ref, flags: 255, data: hex("00 ff") } as const;
      expect(decodeHostFrame(body(encodeHostFrame(input)))).toEqual(input);
      const output: HostMessage = { type: "output", ref, marks: [], data: new Uint8Array(0) };
      expect(decodeHostFrame(body(encodeHostFrame(output)))).toEqual(output);
    }
  });

  it("parts keep the bytes apart from the header (no copy of the payload)", () => {
    const data = hex("41 42");
    const parts = encodeHostFrameParts({ type: "output", ref: 1, marks: [], data });
    expect(parts).toHaveLength(2);
    expect(parts[1]).toBe(data);
    expect(toHex(parts[0]!)).toBe("00 00 00 09 20 00 00 00 01 00 00");
  });

  it("a batch of output chunks is one OUTPUT frame: the header counts them all, the chunks follow unjoined", () => {
    const chunks = [hex("41 42"), new Uint8Array(0), hex("43")];
    const parts = encodeOutputFrameParts(7, chunks);
    expect(toHex(parts[0]!)).toBe("00 00 00 0a 20 00 00 00 07 00 00");
    expect(parts.slice(1)).toEqual([chunks[0], chunks[2]]);
    const joined = Buffer.concat(parts);
    expect(joined.equals(Buffer.from(encodeHostFrame({ type: "output", ref: 7, marks: [], data: hex("41 42 43") })))).toBe(true);
  });

  it("refuses to encode what a field cannot hold", () => {
    expect(() => encodeHostFrame({ type: "hello", protocol: 70_000, build: "", secret: "", role: 0, pid: 1 })).toThrow(HostEncodeError);
    expect(() => encodeHostFrame({ type: "input", ref: -1, flags: 0, data: new Uint8Array(0) })).toThrow(HostEncodeError);
    expect(() => encodeHostFrame({ type: "event", name: "x".repeat(70_000), body: null, data: new Uint8Array(0) })).toThrow(HostEncodeError);
  });
});

describe("host protocol: decoding hostile bytes", () => {
  const invalid = (bytes: string) => decodeHostFrame(hex(bytes)).type;

  it("never throws; unknown types, truncation, trailing bytes and bad UTF-8 or JSON are invalid", () => {
    expect(invalid("")).toBe("invalid");
    expect(invalid("7f")).toBe("invalid");
    expect(invalid("01 00 01 00 05 61")).toBe("invalid"); // hello cut inside its build string
    expect(invalid("02 00 01 00 00 00 00 00 01 00 00 00 00 00 00 00 00 00")).toBe("invalid"); // welcome with a trailing byte
    expect(invalid("01 00 01 00 01 ff 00 00 00 00 00 00 01")).toBe("invalid"); // malformed UTF-8
    expect(invalid("01 00 01 00 00 00 00 09 00 00 00 01")).toBe("invalid"); // unknown role
    expect(invalid("10 00 00 00 01 00 00 00 00 00 01 7b")).toBe("invalid"); // JSON "{"
    expect(invalid("11 00 00 00 01 02 00 00 00 04 6e 75 6c 6c")).toBe("invalid"); // reply status 2
    expect(invalid("20 00 00 00 01 00 01 00 00 00 05 01 61")).toBe("invalid"); // mark past the data
  });

  it("survives random bytes", () => {
    let seed = 1;
    const random = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
    for (let i = 0; i < 5000; i++) {
      const bytes = Uint8Array.from({ length: Math.floor(random() * 40) }, () => Math.floor(random() * 256));
      if (i % 3 === 0 && bytes.length > 0) bytes[0] = [0x01, 0x02, 0x03, 0x10, 0x11, 0x12, 0x20, 0x21][i % 8]!;
      expect(() => decodeHostFrame(bytes)).not.toThrow();
    }
  });
});

describe("HostFrameReader", () => {
  const messages: HostMessage[] = [
    { type: "input", ref: 1, flags: 0, data: hex("61") },
    { type: "event", name: "changed", body: { id: "abc" }, data: new Uint8Array(0) },
    { type: "output", ref: 2, marks: [], data: new Uint8Array(3000).fill(0x62) },
  ];
  const stream = Uint8Array.from(messages.flatMap((m) => [...encodeHostFrame(m)]));

  it("cuts a stream into frames however it is split", () => {
    for (const size of [1, 2, 3, 5, 7, 64, 1000, stream.length]) {
      const reader = new HostFrameReader(1 << 20);
      const frames: Uint8Array[] = [];
      for (let at = 0; at < stream.length; at += size) frames.push(...reader.push(stream.subarray(at, at + size)));
      expect(frames.map((f) => decodeHostFrame(f))).toEqual(messages);
    }
  });

  it("returns a frame inside one chunk as a view of it", () => {
    const reader = new HostFrameReader(1 << 20);
    const [frame] = reader.push(stream);
    expect(frame!.buffer).toBe(stream.buffer);
  });

  it("a length over the limit (before the hello: 256 KiB) ends the stream for good", () => {
    const reader = new HostFrameReader();
    expect(reader.push(hex("00 04 00 01 01"))).toEqual([]);
    expect(reader.overLimit).toBe(true);
    expect(reader.push(encodeHostFrame(messages[0]!))).toEqual([]);
    const ok = new HostFrameReader();
    const big = encodeHostFrame({ type: "event", name: "x", body: "y".repeat(MAX_HELLO_FRAME_BYTES - 20), data: new Uint8Array(0) });
    expect(ok.push(big)).toHaveLength(1);
  });

  it("a zero length is refused", () => {
    const reader = new HostFrameReader();
    reader.push(hex("00 00 00 00"));
    expect(reader.overLimit).toBe(true);
  });
});

describe("LentHostFrameReader", () => {
  const messages: HostMessage[] = [
    { type: "input", ref: 1, flags: 0, data: hex("61") },
    { type: "event", name: "changed", body: { id: "abc" }, data: new Uint8Array(0) },
    { type: "output", ref: 2, marks: [], data: new Uint8Array(3000).fill(0x62) },
    { type: "output", ref: 3, marks: [{ at: 1, on: true }], data: hex("1b 5b 41") },
  ];
  const stream = Uint8Array.from(messages.flatMap((m) => [...encodeHostFrame(m)]));

  /** Feed `stream` in chunks of `size` through one reused buffer that is scribbled over after each push, as a lent read is. */
  function readLent(reader: LentHostFrameReader, input: Uint8Array, size: number | ((at: number) => number)) {
    const lentBuffer = new Uint8Array(input.length);
    const decoded: unknown[] = [];
    for (let at = 0; at < input.length; ) {
      const n = Math.max(1, Math.min(typeof size === "number" ? size : size(at), input.length - at));
      const chunk = lentBuffer.subarray(0, n);
      chunk.set(input.subarray(at, at + n));
      reader.push(chunk, (frame) => {
        // What a listener keeps it copies while the frame is whole.
        const message = decodeHostFrame(frame);
        if ("data" in message) message.data = new Uint8Array(message.data);
        decoded.push(message);
        return true;
      });
      chunk.fill(0xee);
      at += n;
    }
    return decoded;
  }

  it("cuts a stream into frames however it is split, each frame whole while onFrame runs", () => {
    for (const size of [1, 2, 3, 4, 5, 7, 64, 1000, 3004, stream.length]) {
      expect(readLent(new LentHostFrameReader(1 << 20), stream, size)).toEqual(messages);
    }
  });

  it("a frame inside one chunk is a view of it; frames across chunks share one assembly buffer", () => {
    const reader = new LentHostFrameReader(1 << 20);
    const seen: Uint8Array[] = [];
    reader.push(stream, (frame) => (seen.push(frame), true));
    expect(seen).toHaveLength(messages.length);
    expect(seen.every((f) => f.buffer === stream.buffer)).toBe(true);
    const split: ArrayBufferLike[] = [];
    for (let round = 0; round < 2; round++) {
      const frame = encodeHostFrame(messages[2]!);
      reader.push(frame.slice(0, 100), () => true);
      reader.push(frame.slice(100), (f) => (split.push(f.buffer), true));
    }
    expect(split).toHaveLength(2);
    expect(split[0]).toBe(split[1]);
    expect(split[0]).not.toBe(stream.buffer);
  });

  it("holds what a peer sent, not what its length prefix announced, and lets a large buffer go after its frame", () => {
    const reader = new LentHostFrameReader(1 << 30);
    reader.push(hex("10 00 00 00 0b 00 00"), () => true); // 256 MiB announced, 3 bytes sent
    expect((reader as unknown as { assembly: Uint8Array }).assembly.length).toBeLessThanOrEqual(64 * 1024);
    const big = encodeHostFrame({ type: "output", ref: 9, marks: [], data: new Uint8Array(KEPT_ASSEMBLY_BYTES + 1).fill(7) });
    const other = new LentHostFrameReader(1 << 30);
    let length = 0;
    other.push(big.subarray(0, 10), () => true);
    other.push(big.subarray(10), (f) => ((length = f.length), true));
    expect(length).toBe(big.length - FRAME_HEADER_BYTES);
    expect((other as unknown as { assembly: Uint8Array }).assembly.length).toBe(0);
  });

  it("stops at the frame whose handler says so", () => {
    const reader = new LentHostFrameReader(1 << 20);
    let count = 0;
    reader.push(stream, () => ++count < 2);
    expect(count).toBe(2);
  });

  it("a length over the limit or of zero ends the stream for good", () => {
    const reader = new LentHostFrameReader();
    const frames: Uint8Array[] = [];
    reader.push(hex("00 04 00 01 01"), (f) => (frames.push(f), true));
    expect(reader.overLimit).toBe(true);
    reader.push(encodeHostFrame(messages[0]!), (f) => (frames.push(f), true));
    expect(frames).toEqual([]);
    const zero = new LentHostFrameReader();
    zero.push(hex("00 00"), () => true);
    zero.push(hex("00 00"), () => true);
    expect(zero.overLimit).toBe(true);
  });

  it("reads any stream exactly as HostFrameReader does, however it is split", () => {
    const message = fc.oneof(
      fc.record({ type: fc.constant("input" as const), ref: fc.nat(), flags: fc.nat(255), data: fc.uint8Array({ maxLength: 300 }) }),
      fc.record({ type: fc.constant("output" as const), ref: fc.nat(), marks: fc.constant([]), data: fc.uint8Array({ maxLength: 70_000 }) }),
      fc.record({ type: fc.constant("event" as const), name: fc.string({ maxLength: 20 }), body: fc.jsonValue(), data: fc.uint8Array({ maxLength: 50 }) }),
    );
    fc.assert(
      fc.property(fc.array(message, { maxLength: 8 }), fc.array(fc.integer({ min: 1, max: 80_000 }), { minLength: 1, maxLength: 20 }), (list, sizes) => {
        const input = Uint8Array.from(list.flatMap((m) => [...encodeHostFrame(m as HostMessage)]));
        const owned = new HostFrameReader(1 << 20);
        const expected: unknown[] = [];
        let i = 0;
        for (let at = 0; at < input.length; ) {
          const n = sizes[i++ % sizes.length]!;
          expected.push(...owned.push(input.slice(at, at + n)).map((f) => decodeHostFrame(f)));
          at += n;
        }
        let j = 0;
        expect(readLent(new LentHostFrameReader(1 << 20), input, () => sizes[j++ % sizes.length]!)).toEqual(expected);
        expect(expected).toHaveLength(list.length);
      }),
      { numRuns: 200 },
    );
  });
});
