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
