import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import * as ws from "ws";
import { encodeClientFrame, encodeServerFrame as serverFrame, WsFrameParser, WsOpcode, WsProtocolError } from "./ws-frame-parser.ts";

/** A message or control frame as rebuilt from the sink; the payload as its length and digest (deep-comparing 300 kB buffers is slow). */
type Event = { kind: "message" | "control"; opcode: number; length: number; sha1: string };
const event = (kind: Event["kind"], opcode: number, data: Buffer): Event => ({
  kind,
  opcode,
  length: data.length,
  sha1: createHash("sha1").update(data).digest("hex"),
});

/** Parse `chunks` and rebuild whole messages from the sink's views. */
function parse(chunks: Iterable<Uint8Array>): Event[] {
  const events: Event[] = [];
  let current: { opcode: number; parts: Buffer[] } | null = null;
  const parser = new WsFrameParser({
    messageStart: (opcode) => (current = { opcode, parts: [] }),
    messageData: (bytes) => current!.parts.push(Buffer.from(bytes)),
    messageEnd: () => {
      events.push(event("message", current!.opcode, Buffer.concat(current!.parts)));
      current = null;
    },
    control: (opcode, payload) => events.push(event("control", opcode, Buffer.from(payload))),
  });
  for (const chunk of chunks) parser.push(chunk);
  return events;
}

function* byteByByte(stream: Buffer): Iterable<Uint8Array> {
  for (let i = 0; i < stream.length; i++) yield stream.subarray(i, i + 1);
}

const filled = (length: number, seed: number) => Buffer.from(Array.from({ length }, (_, i) => (i * 31 + seed) & 0xff));

type FrameOptions = { fin: boolean; rsv1: boolean; opcode: number; mask: boolean; readOnly: boolean };
/** ws's own frame encoder (not in its type declarations). */
const { Sender } = ws as unknown as { Sender: { frame(data: Buffer, options: FrameOptions): Buffer[] } };

describe("WsFrameParser", () => {
  // Lengths on both sides of the 7-bit, 16-bit and 64-bit forms.
  const lengths = [0, 1, 125, 126, 127, 65535, 65536, 300_000];
  const messages = lengths.map((n, i) => filled(n, i));
  const stream = Buffer.concat(messages.map((m) => serverFrame(WsOpcode.BINARY, m)));
  const expected = messages.map((data) => event("message", WsOpcode.BINARY, data));

  it("gives every payload byte of the 2-, 4- and 10-byte header forms, read whole", () => {
    expect(parse([stream])).toEqual(expected);
  });

  it("reads frames as the ws library's sender builds them (an encoder independent of this module)", () => {
    const frames = messages.map((m) => Buffer.concat(Sender.frame(m, { fin: true, rsv1: false, opcode: WsOpcode.BINARY, mask: false, readOnly: false })));
    expect(Buffer.concat(frames).equals(stream)).toBe(true);
    expect(parse(frames)).toEqual(expected);
  });

  it("parses the same stream fed byte by byte", () => {
    expect(parse(byteByByte(stream))).toEqual(expected);
  });

  it("parses the same stream split in two at every point around each header", () => {
    const headerStarts: number[] = [];
    let at = 0;
    for (const m of messages) {
      headerStarts.push(at);
      at += serverFrame(WsOpcode.BINARY, m).length;
    }
    const splits = new Set<number>();
    for (const start of headerStarts) for (let d = -2; d <= 12; d++) splits.add(Math.max(0, Math.min(stream.length, start + d)));
    for (const split of splits) expect(parse([stream.subarray(0, split), stream.subarray(split)])).toEqual(expected);
  });

  it("joins fragments across continuation frames, with a ping between them", () => {
    const events = parse(
      byteByByte(
        Buffer.concat([
          serverFrame(WsOpcode.BINARY, Buffer.from("ab"), false),
          serverFrame(WsOpcode.PING, Buffer.from("hi")),
          serverFrame(WsOpcode.CONTINUATION, Buffer.alloc(0), false),
          serverFrame(WsOpcode.CONTINUATION, Buffer.from("cd")),
          serverFrame(WsOpcode.CLOSE, Buffer.from([0x11, 0x38])),
        ]),
      ),
    );
    expect(events).toEqual([
      event("control", WsOpcode.PING, Buffer.from("hi")),
      event("message", WsOpcode.BINARY, Buffer.from("abcd")),
      event("control", WsOpcode.CLOSE, Buffer.from([0x11, 0x38])),
    ]);
  });

  it.each([
    ["an RSV bit", Buffer.from([0xc2, 0x00])],
    ["a masked frame", Buffer.from([0x82, 0x81, 1, 2, 3, 4, 0])],
    ["a control frame over 125 bytes", serverFrame(WsOpcode.PING, Buffer.alloc(126))],
    ["a fragmented control frame", serverFrame(WsOpcode.PING, Buffer.alloc(1), false)],
    ["a continuation outside a message", serverFrame(WsOpcode.CONTINUATION, Buffer.alloc(1))],
    ["a new message inside a fragmented one", Buffer.concat([serverFrame(WsOpcode.BINARY, Buffer.alloc(1), false), serverFrame(WsOpcode.BINARY, Buffer.alloc(1))])],
    ["an unknown opcode", serverFrame(0x3, Buffer.alloc(1))],
    ["a 64-bit length past 2^53", Buffer.from([0x82, 127, 0xff, 0, 0, 0, 0, 0, 0, 0])],
  ])("refuses %s, and everything after it", (_what, bytes) => {
    const parser = new WsFrameParser({ messageStart() {}, messageData() {}, messageEnd() {}, control() {} });
    expect(() => parser.push(bytes)).toThrow(WsProtocolError);
    expect(() => parser.push(serverFrame(WsOpcode.BINARY, Buffer.alloc(1)))).toThrow(WsProtocolError);
  });
});

describe("encodeClientFrame", () => {
  /** What a server does with a client frame: read the header, unmask the payload. */
  function unmask(frame: Buffer): { fin: boolean; opcode: number; payload: Buffer } {
    expect(frame[1]! & 0x80).toBe(0x80);
    const length7 = frame[1]! & 0x7f;
    const extended = length7 === 126 ? 2 : length7 === 127 ? 8 : 0;
    const length = extended === 0 ? length7 : extended === 2 ? frame.readUInt16BE(2) : Number(frame.readBigUInt64BE(2));
    const key = frame.subarray(2 + extended, 6 + extended);
    const payload = Buffer.from(frame.subarray(6 + extended));
    expect(payload.length).toBe(length);
    for (let i = 0; i < payload.length; i++) payload[i]! ^= key[i & 3]!;
    return { fin: (frame[0]! & 0x80) !== 0, opcode: frame[0]! & 0x0f, payload };
  }

  it.each([0, 5, 125, 126, 65535, 65536])("masks a %i-byte payload with the shortest length form", (length) => {
    const payload = filled(length, 7);
    const frame = encodeClientFrame(WsOpcode.BINARY, payload, Uint8Array.from([0xde, 0xad, 0xbe, 0xef]));
    const headerBytes = 2 + (length < 126 ? 0 : length <= 0xffff ? 2 : 8) + 4;
    expect(frame.length).toBe(headerBytes + length);
    if (length >= 4) expect(frame.subarray(headerBytes).equals(payload)).toBe(false);
    const { fin, opcode, payload: unmasked } = unmask(frame);
    expect({ fin, opcode }).toEqual({ fin: true, opcode: WsOpcode.BINARY });
    expect(unmasked.equals(payload)).toBe(true);
  });
});
