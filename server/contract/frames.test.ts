import { describe, expect, it } from "vitest";
import {
  ClientFrame,
  FrameEncodeError,
  ServerFrame,
  decodeClientFrame,
  decodeServerFrame,
  encodeAutoReply,
  encodeReplayParsed,
  encodeControl,
  encodeExit,
  encodeInput,
  encodeOutput,
  encodeOutputChunks,
  encodePosition,
  encodeQuerySubmissions,
  encodeResize,
  encodeResync,
  encodeSnapshot,
  encodeStatus,
  encodeSubmit,
  encodeSubmitStatus,
  encodeTakeControl,
  encodeClientMessage,
  encodeServerMessage,
  type ClientMessage,
  type FrameError,
  type ServerMessage,
} from "./frames.ts";
import { MAX_CLIENT_FRAME_BYTES, MAX_SUBMISSION_BODY_BYTES, colorSchemeReport } from "./protocol.ts";
import { decodeSessionListEvent, encodeSessionListEvent } from "./session-list.ts";
import type { ControlPayload, PositionPayload, SessionInfo } from "./types.ts";
import { encodeUtf8 } from "./utf8.ts";
import { asciiHex, hex, toHex } from "../testing/hex.ts";

const session: SessionInfo = {
  id: "abc12345",
  title: "bash — ~/src",
  command: ["bash", "--norc", "--noprofile"],
  cwd: "/home/u/src",
  pid: 4242,
  status: "running",
  exitCode: null,
  generation: "boot1.1",
  createdAt: 1_700_000_000_000,
  updatedAt: 1_700_000_000_500,
  cols: 80,
  rows: 24,
  controller: { clientId: "tab-aaaa1111", label: "Pixel 8", since: 1_700_000_000_100 },
  clients: 2,
  attention: false,
  preview: ["$ ls", "a.txt  b.txt"],
};

/** A frame: opcode byte then the UTF-8 of a JSON text. */
const jsonFrame = (opcode: number, json: string) => Uint8Array.of(opcode, ...encodeUtf8(json));
const bytes = (text: string) => encodeUtf8(text);

function expectInvalid(result: unknown, reason: FrameError["reason"], id?: string): void {
  expect(result).toMatchObject({ type: "invalid", reason });
  expect((result as FrameError).id).toBe(id);
}

describe("opcodes", () => {
  it("match docs/protocol.md's frame tables", () => {
    expect(ServerFrame).toEqual({ OUTPUT: 0, SNAPSHOT: 1, STATUS: 2, EXIT: 3, POSITION: 4, SUBMIT_STATUS: 5, CONTROL: 6 });
    expect(ClientFrame).toEqual({ INPUT: 0, RESIZE: 1, RESYNC: 2, SUBMIT: 3, QUERY_SUBMISSIONS: 4, TAKE_CONTROL: 5, AUTO_REPLY: 6, REPLAY_PARSED: 7 });
  });
});

describe("byte vectors", () => {
  // One exact vector per opcode in each direction: the bytes a peer in another language must produce.
  const small: SessionInfo = {
    id: "abc12345", title: "t", command: ["bash"], cwd: null, pid: 42, status: "running", exitCode: null, generation: "b.1",
    createdAt: 1, updatedAt: 2, cols: 80, rows: 24, controller: null, clients: 0, attention: false, preview: [],
  };
  const serverVectors: [string, Uint8Array, string][] = [
    ["0x00 output", encodeOutput(hex("1b 5b 6d e2 82")), "00 1b 5b 6d e2 82"],
    ["0x01 snapshot", encodeSnapshot("\x1b[?2004h"), "01 1b 5b 3f 32 30 30 34 68"],
    [
      "0x02 status",
      encodeStatus(small),
      `02 ${asciiHex('{"id":"abc12345","title":"t","command":["bash"],"cwd":null,"pid":42,"status":"running","exitCode":null,"generation":"b.1","createdAt":1,"updatedAt":2,"cols":80,"rows":24,"controller":null,"clients":0,"attention":false,"preview":[]}')}`,
    ],
    ["0x03 exit", encodeExit({ exitCode: 5 }), `03 ${asciiHex('{"exitCode":5}')}`],
    [
      "0x04 position",
      encodePosition({ generation: "b.1", mode: "reset", start: 0, end: 5, truncated: false }),
      `04 ${asciiHex('{"generation":"b.1","mode":"reset","start":0,"end":5,"truncated":false}')}`,
    ],
    ["0x05 submit status", encodeSubmitStatus({ id: "sub-0001", state: "written" }), `05 ${asciiHex('{"id":"sub-0001","state":"written"}')}`],
    [
      "0x06 control",
      encodeControl({ controller: { clientId: "tab-aaaa1111", label: "Pixel", since: 7 }, cols: 80, rows: 24, colorSchemeReports: false }),
      `06 ${asciiHex('{"controller":{"clientId":"tab-aaaa1111","label":"Pixel","since":7},"cols":80,"rows":24,"colorSchemeReports":false}')}`,
    ],
  ];
  const clientVectors: [string, Uint8Array, string][] = [
    ["0x00 input", encodeInput("ls\r"), "00 6c 73 0d"],
    ["0x01 resize", encodeResize({ cols: 80, rows: 24 }), `01 ${asciiHex('{"cols":80,"rows":24}')}`],
    ["0x02 resync", encodeResync(), "02"],
    ["0x03 submit", encodeSubmit({ id: "sub-0001", generation: "b.1" }, "hi", "\r"), `03 ${asciiHex('{"id":"sub-0001","generation":"b.1","bodyBytes":2}')} 0a 68 69 0d`],
    ["0x04 query submissions", encodeQuerySubmissions({ ids: ["sub-0001", "sub-0002"] }), `04 ${asciiHex('{"ids":["sub-0001","sub-0002"]}')}`],
    ["0x05 take control", encodeTakeControl(), "05"],
    ["0x06 auto-reply", encodeAutoReply("\x1b[?997;1n"), "06 1b 5b 3f 39 39 37 3b 31 6e"],
    ["0x07 replay parsed", encodeReplayParsed(), "07"],
  ];

  it.each(serverVectors)("server %s encodes to its bytes and decodes back to the same frame", (_name, encoded, expected) => {
    expect(toHex(encoded)).toBe(expected);
    const decoded = decodeServerFrame(hex(expected));
    expect(decoded).not.toHaveProperty("reason");
    expect(toHex(encodeServerMessage(decoded as ServerMessage))).toBe(expected);
  });

  it.each(clientVectors)("client %s encodes to its bytes and decodes back to the same frame", (_name, encoded, expected) => {
    expect(toHex(encoded)).toBe(expected);
    const decoded = decodeClientFrame(hex(expected));
    expect(decoded).not.toHaveProperty("reason");
    expect(toHex(encodeClientMessage(decoded as ClientMessage))).toBe(expected);
  });

  it("cover every opcode of both tables", () => {
    expect(serverVectors.map(([, , h]) => Number.parseInt(h.slice(0, 2), 16))).toEqual(Object.values(ServerFrame));
    expect(clientVectors.map(([, , h]) => Number.parseInt(h.slice(0, 2), 16))).toEqual(Object.values(ClientFrame));
  });
});

describe("raw byte frames", () => {
  it("output of a string is its UTF-8 after 0x00", () => {
    expect(toHex(encodeOutput("hi"))).toBe("00 68 69");
    expect(toHex(encodeOutputChunks([hex("68"), hex(""), hex("69 e2 82")]))).toBe("00 68 69 e2 82");
    expect(toHex(encodeSnapshot("\x1b[?1049h"))).toBe("01 1b 5b 3f 31 30 34 39 68");
    expect(toHex(encodeInput("é"))).toBe("00 c3 a9");
    expect(toHex(encodeAutoReply(colorSchemeReport(false)))).toBe("06 1b 5b 3f 39 39 37 3b 32 6e");
  });

  it("output into memory that was not zeroed writes every byte of the frame", () => {
    const dirty = (bytes: number) => new Uint8Array(bytes).fill(0xff);
    expect(toHex(encodeOutput(hex("68 69"), dirty))).toBe("00 68 69");
    expect(toHex(encodeOutputChunks([hex("68"), hex(""), hex("69 e2 82")], dirty))).toBe("00 68 69 e2 82");
  });

  it("empty control frames are one byte", () => {
    expect(toHex(encodeResync())).toBe("02");
    expect(toHex(encodeTakeControl())).toBe("05");
    expect(decodeClientFrame(hex("02"))).toEqual({ type: "resync" });
    expect(decodeClientFrame(hex("05"))).toEqual({ type: "takeControl" });
    expect(decodeClientFrame(hex("07"))).toEqual({ type: "replayParsed" });
    expectInvalid(decodeClientFrame(hex("07 00")), "unexpected_payload");
  });

  it("keeps a multi-byte character split across frames byte-exact", () => {
    // "€" is e2 82 ac; a PTY read can end in the middle of it.
    const first = encodeOutput(hex("41 e2 82"));
    const second = encodeOutput(hex("ac 42"));
    expect(toHex(first)).toBe("00 41 e2 82");
    const a = decodeServerFrame(first);
    const b = decodeServerFrame(second);
    expect(a.type === "output" && toHex(a.data)).toBe("41 e2 82");
    expect(b.type === "output" && toHex(b.data)).toBe("ac 42");
    expect(new TextDecoder().decode(hex("41 e2 82 ac 42"))).toBe("A€B");
  });

  it("decodes raw payloads as views into the frame, not copies", () => {
    const frame = hex("00 68 69");
    const server = decodeServerFrame(frame);
    const client = decodeClientFrame(frame);
    expect(server.type === "output" && server.data.buffer).toBe(frame.buffer);
    expect(client.type === "input" && client.data.buffer).toBe(frame.buffer);
    expect(client.type === "input" && client.data.byteOffset).toBe(1);
  });

  it("accepts a Node Buffer (what ws delivers)", () => {
    const message = decodeClientFrame(Buffer.from([0x06, 0x1b, 0x5b, 0x30, 0x6e]));
    expect(message.type === "autoReply" && toHex(message.data)).toBe("1b 5b 30 6e");
  });

  it("allows empty raw payloads", () => {
    expect(decodeServerFrame(hex("01"))).toEqual({ type: "snapshot", data: new Uint8Array(0) });
    expect(decodeClientFrame(hex("00"))).toEqual({ type: "input", data: new Uint8Array(0) });
  });
});

describe("JSON frames", () => {
  it("encode to the opcode then compact JSON", () => {
    expect(encodeResize({ cols: 80, rows: 24 })).toEqual(jsonFrame(1, '{"cols":80,"rows":24}'));
    expect(encodeExit({ exitCode: 130 })).toEqual(jsonFrame(3, '{"exitCode":130}'));
    expect(encodeQuerySubmissions({ ids: ["sub-0001"] })).toEqual(jsonFrame(4, '{"ids":["sub-0001"]}'));
    expect(encodeSubmitStatus({ id: "sub-0001", state: "failed", error: "generation" })).toEqual(
      jsonFrame(5, '{"id":"sub-0001","state":"failed","error":"generation"}'),
    );
  });

  it("round-trip every server message", () => {
    const position: PositionPayload = { generation: "boot1.1", mode: "append", start: 10, end: 4096, truncated: true };
    const control: ControlPayload = { controller: session.controller, cols: 120, rows: 40, colorSchemeReports: true };
    expect(decodeServerFrame(encodeStatus(session))).toEqual({ type: "status", session });
    const exited = { ...session, status: "exited" as const, exitCode: 1, pid: null, cwd: null, controller: null, hybrid: null };
    expect(decodeServerFrame(encodeStatus(exited))).toEqual({ type: "status", session: exited });
    const hybrid = {
      ...session,
      hybrid: { agent: "claude", conversationId: "c1", previousConversationIds: ["c0"], end: "chat" as const, state: "idle" as const, error: "x" },
    };
    expect(decodeServerFrame(encodeStatus(hybrid))).toEqual({ type: "status", session: hybrid });
    expect(decodeServerFrame(encodeExit({ exitCode: 0 }))).toEqual({ type: "exit", exitCode: 0 });
    expect(decodeServerFrame(encodePosition(position))).toEqual({ type: "position", position });
    expect(decodeServerFrame(encodeSubmitStatus({ id: "sub-0001", state: "written" }))).toEqual({
      type: "submitStatus",
      status: { id: "sub-0001", state: "written" },
    });
    expect(decodeServerFrame(encodeControl(control))).toEqual({ type: "control", control });
    expect(decodeServerFrame(encodeControl({ ...control, controller: null }))).toEqual({
      type: "control",
      control: { ...control, controller: null },
    });
  });

  it("round-trip every client message", () => {
    expect(decodeClientFrame(encodeResize({ cols: 2, rows: 1 }))).toEqual({ type: "resize", cols: 2, rows: 1 });
    expect(decodeClientFrame(encodeResize({ cols: 1000, rows: 250 }))).toEqual({ type: "resize", cols: 1000, rows: 250 });
    expect(decodeClientFrame(encodeResize({ cols: 250, rows: 1000 }))).toEqual({ type: "resize", cols: 250, rows: 1000 });
    const ids = Array.from({ length: 64 }, (_, i) => `sub-${String(i).padStart(4, "0")}`);
    expect(decodeClientFrame(encodeQuerySubmissions({ ids }))).toEqual({ type: "querySubmissions", ids });
    expect(decodeClientFrame(encodeQuerySubmissions({ ids: [] }))).toEqual({ type: "querySubmissions", ids: [] });
  });

  it("ignore unknown extra fields", () => {
    expect(decodeClientFrame(jsonFrame(1, '{"cols":80,"rows":24,"dpr":2}'))).toEqual({ type: "resize", cols: 80, rows: 24 });
    expect(decodeServerFrame(jsonFrame(3, '{"exitCode":2,"signal":null}'))).toEqual({ type: "exit", exitCode: 2 });
  });

  it("send only contract fields, never a server object's internals", () => {
    const leaky = { ...session, ptyHandle: { fd: 3 } } as SessionInfo;
    const text = new TextDecoder().decode(encodeStatus(leaky).subarray(1));
    expect(text).not.toContain("ptyHandle");
  });

  it("refuse to encode a payload the peer would reject", () => {
    expect(() => encodeResize({ cols: 1, rows: 24 })).toThrow(FrameEncodeError);
    expect(() => encodeStatus({ ...session, id: "ABC" })).toThrow(FrameEncodeError);
    expect(() => encodePosition({ generation: "g", mode: "reset", start: 5, end: 4, truncated: false })).toThrow(FrameEncodeError);
    expect(() => encodeQuerySubmissions({ ids: Array(65).fill("sub-0001") })).toThrow(FrameEncodeError);
  });
});

describe("submit frames", () => {
  it("are header JSON, newline, body, submit key", () => {
    const frame = encodeSubmit({ id: "sub-0001", generation: "g1" }, "a\nb", "\r");
    expect(toHex(frame)).toBe(`03 ${asciiHex('{"id":"sub-0001","generation":"g1","bodyBytes":3}')} 0a 61 0a 62 0d`);
  });

  it("round-trip a body with newlines and multi-byte characters, counting bytes not characters", () => {
    const body = "fix the bug\nin café.ts 😀";
    const frame = encodeSubmit({ id: "sub-0002", generation: "boot1.1" }, body, "\x1b\r");
    const message = decodeClientFrame(frame);
    expect(message.type).toBe("submit");
    if (message.type !== "submit") return;
    expect(message.header).toEqual({ id: "sub-0002", generation: "boot1.1", bodyBytes: 28 });
    expect(new TextDecoder().decode(message.body)).toBe(body);
    expect(toHex(message.submitKey)).toBe("1b 0d");
  });

  it("allow an empty body and an empty key", () => {
    const message = decodeClientFrame(encodeSubmit({ id: "sub-0003", generation: "g", bodyBytes: 0 }, "", ""));
    expect(message).toEqual({
      type: "submit",
      header: { id: "sub-0003", generation: "g", bodyBytes: 0 },
      body: new Uint8Array(0),
      submitKey: new Uint8Array(0),
    });
  });

  it("refuse to encode a header whose bodyBytes disagrees with the body", () => {
    expect(() => encodeSubmit({ id: "sub-0004", generation: "g", bodyBytes: 2 }, "é!", "\r")).toThrow(FrameEncodeError);
    expect(() => encodeSubmit({ id: "short", generation: "g" }, "x", "\r")).toThrow(FrameEncodeError);
    expect(() => encodeSubmit({ id: "sub-0004", generation: "g" }, new Uint8Array(MAX_SUBMISSION_BODY_BYTES + 1), "\r")).toThrow(
      FrameEncodeError,
    );
  });

  const submit = (header: string, rest = "") => hex(`03 ${asciiHex(header)} 0a ${asciiHex(rest)}`);

  it("without a readable ID are invalid without an id", () => {
    expectInvalid(decodeClientFrame(hex(`03 ${asciiHex('{"id":"sub-0001"}')}`)), "bad_header");
    expectInvalid(decodeClientFrame(submit("{nope")), "bad_header");
    expectInvalid(decodeClientFrame(submit('["sub-0001"]')), "bad_header");
    expectInvalid(decodeClientFrame(submit('{"id":"sub-001","generation":"g","bodyBytes":0}')), "bad_header");
    expectInvalid(decodeClientFrame(submit(`{"id":"${"a".repeat(65)}","generation":"g","bodyBytes":0}`)), "bad_header");
    expectInvalid(decodeClientFrame(submit('{"id":12345678,"generation":"g","bodyBytes":0}')), "bad_header");
    expectInvalid(decodeClientFrame(hex(`03 ${asciiHex(" ".repeat(1100))} 0a`)), "bad_header");
  });

  it("with a readable ID but a bad header or body carry the id", () => {
    const id = "sub-0001";
    expectInvalid(decodeClientFrame(submit(`{"id":"${id}","generation":"","bodyBytes":0}`)), "bad_header", id);
    expectInvalid(decodeClientFrame(submit(`{"id":"${id}","generation":"${"g".repeat(129)}","bodyBytes":0}`)), "bad_header", id);
    expectInvalid(decodeClientFrame(submit(`{"id":"${id}","generation":"g"}`, "x")), "bad_header", id);
    expectInvalid(decodeClientFrame(submit(`{"id":"${id}","generation":"g","bodyBytes":-1}`, "x")), "bad_header", id);
    expectInvalid(decodeClientFrame(submit(`{"id":"${id}","generation":"g","bodyBytes":1.5}`, "xx")), "bad_header", id);
    expectInvalid(decodeClientFrame(submit(`{"id":"${id}","generation":"g","bodyBytes":"1"}`, "x")), "bad_header", id);
    expectInvalid(decodeClientFrame(submit(`{"id":"${id}","generation":"g","bodyBytes":3}`, "ab")), "body_truncated", id);
    expectInvalid(
      decodeClientFrame(submit(`{"id":"${id}","generation":"g","bodyBytes":${MAX_SUBMISSION_BODY_BYTES + 1}}`, "x")),
      "body_too_large",
      id,
    );
    expectInvalid(decodeClientFrame(submit(`{"id":"${id}","generation":"g","bodyBytes":1}`, "x" + "\r".repeat(65))), "submit_key_too_large", id);
    const big = encodeSubmit({ id, generation: "g" }, "0123456789", "\r");
    expectInvalid(decodeClientFrame(big, { maxFrameBytes: 20 }), "too_large", id);
    expectInvalid(decodeClientFrame(big, { maxSubmissionBodyBytes: 9 }), "body_too_large", id);
  });
});

describe("malformed client frames", () => {
  const cases: [string, Uint8Array, FrameError["reason"]][] = [
    ["empty", hex(""), "empty"],
    ["unknown opcode 0x08", hex("08"), "unknown_opcode"],
    ["unknown opcode 0xff", hex("ff 00"), "unknown_opcode"],
    ["resize, truncated JSON", jsonFrame(1, '{"cols":80'), "bad_json"],
    ["resize, no payload", hex("01"), "bad_json"],
    ["resize, invalid UTF-8", hex("01 ff"), "bad_json"],
    ["resize, a JSON array", jsonFrame(1, "[80,24]"), "bad_json"],
    ["resize, JSON null", jsonFrame(1, "null"), "bad_json"],
    ["resize, cols a string", jsonFrame(1, '{"cols":"80","rows":24}'), "bad_payload"],
    ["resize, cols fractional", jsonFrame(1, '{"cols":80.5,"rows":24}'), "bad_payload"],
    ["resize, cols 1", jsonFrame(1, '{"cols":1,"rows":24}'), "bad_payload"],
    ["resize, cols 1001", jsonFrame(1, '{"cols":1001,"rows":24}'), "bad_payload"],
    ["resize, rows 0", jsonFrame(1, '{"cols":80,"rows":0}'), "bad_payload"],
    ["resize, over 250000 cells", jsonFrame(1, '{"cols":1000,"rows":251}'), "bad_payload"],
    ["resize, rows missing", jsonFrame(1, '{"cols":80}'), "bad_payload"],
    ["resize, rows null", jsonFrame(1, '{"cols":80,"rows":null}'), "bad_payload"],
    ["resync with a payload", hex("02 00"), "unexpected_payload"],
    ["take-control with a payload", hex("05 7b 7d"), "unexpected_payload"],
    ["query, ids not an array", jsonFrame(4, '{"ids":"sub-0001"}'), "bad_payload"],
    ["query, an id of 7 characters", jsonFrame(4, '{"ids":["abcdefg"]}'), "bad_payload"],
    ["query, an id of 65 characters", jsonFrame(4, `{"ids":["${"a".repeat(65)}"]}`), "bad_payload"],
    ["query, 65 ids", jsonFrame(4, JSON.stringify({ ids: Array(65).fill("sub-0001") })), "bad_payload"],
    ["query, an id that is a number", jsonFrame(4, '{"ids":[12345678]}'), "bad_payload"],
  ];
  it.each(cases)("%s", (_name, frame, reason) => expectInvalid(decodeClientFrame(frame), reason));

  it("accepts a frame of exactly the limit and refuses one byte more", () => {
    const atLimit = new Uint8Array(MAX_CLIENT_FRAME_BYTES);
    expect(decodeClientFrame(atLimit).type).toBe("input");
    expectInvalid(decodeClientFrame(new Uint8Array(MAX_CLIENT_FRAME_BYTES + 1)), "too_large");
    expectInvalid(decodeClientFrame(hex("00 61 62 63 64"), { maxFrameBytes: 4 }), "too_large");
  });

  it("refuses what is not bytes at all", () => {
    expectInvalid(decodeClientFrame("00" as unknown as Uint8Array), "not_binary");
    expectInvalid(decodeServerFrame(null as unknown as Uint8Array), "not_binary");
  });

  it("reports the opcode of a refused frame", () => {
    expect(decodeClientFrame(hex("08"))).toMatchObject({ opcode: 8 });
  });
});

describe("malformed server frames", () => {
  const status = (patch: Record<string, unknown>) => jsonFrame(2, JSON.stringify({ ...session, ...patch }));
  const control = (patch: Record<string, unknown>) =>
    jsonFrame(6, JSON.stringify({ controller: null, cols: 80, rows: 24, colorSchemeReports: false, ...patch }));
  const cases: [string, Uint8Array, FrameError["reason"]][] = [
    ["empty", hex(""), "empty"],
    ["unknown opcode 0x07", hex("07 00"), "unknown_opcode"],
    ["status, not JSON", jsonFrame(2, "{"), "bad_json"],
    ["status, session id uppercase", status({ id: "ABC12345" }), "bad_payload"],
    ["status, pid a string", status({ pid: "4242" }), "bad_payload"],
    ["status, pid 0", status({ pid: 0 }), "bad_payload"],
    ["status, unknown status", status({ status: "sleeping" }), "bad_payload"],
    ["status, four preview lines", status({ preview: ["a", "b", "c", "d"] }), "bad_payload"],
    ["status, preview of numbers", status({ preview: [1] }), "bad_payload"],
    ["status, command missing", status({ command: undefined }), "bad_payload"],
    ["status, controller label with a control character", status({ controller: { clientId: "tab-aaaa1111", label: "a\x1bb", since: 1 } }), "bad_payload"],
    ["status, controller label of 41 characters", status({ controller: { clientId: "tab-aaaa1111", label: "x".repeat(41), since: 1 } }), "bad_payload"],
    ["status, hybrid of the wrong shape", status({ hybrid: { agent: "claude" } }), "bad_payload"],
    ["exit, fractional code", jsonFrame(3, '{"exitCode":1.5}'), "bad_payload"],
    ["exit, no code", jsonFrame(3, "{}"), "bad_payload"],
    ["position, start after end", jsonFrame(4, '{"generation":"g","mode":"reset","start":5,"end":4,"truncated":false}'), "bad_payload"],
    ["position, unknown mode", jsonFrame(4, '{"generation":"g","mode":"merge","start":0,"end":4,"truncated":false}'), "bad_payload"],
    ["position, negative start", jsonFrame(4, '{"generation":"g","mode":"reset","start":-1,"end":4,"truncated":false}'), "bad_payload"],
    ["position, truncated as 0", jsonFrame(4, '{"generation":"g","mode":"reset","start":0,"end":4,"truncated":0}'), "bad_payload"],
    ["submit status, unknown state", jsonFrame(5, '{"id":"sub-0001","state":"done"}'), "bad_payload"],
    ["submit status, unknown error", jsonFrame(5, '{"id":"sub-0001","state":"failed","error":"oops"}'), "bad_payload"],
    ["control, cols 0", control({ cols: 0 }), "bad_payload"],
    ["control, controller client id of 7 characters", control({ controller: { clientId: "abcdefg", label: "", since: 0 } }), "bad_payload"],
    ["control, colorSchemeReports missing", control({ colorSchemeReports: undefined }), "bad_payload"],
  ];
  it.each(cases)("%s", (_name, frame, reason) => expectInvalid(decodeServerFrame(frame), reason));
});

describe("/ws/sessions messages", () => {
  it("round-trip every event", () => {
    for (const event of [
      { type: "snapshot" as const, sessions: [session] },
      { type: "created" as const, session },
      { type: "updated" as const, session },
      { type: "removed" as const, id: "abc12345" },
    ]) {
      expect(decodeSessionListEvent(encodeSessionListEvent(event))).toEqual(event);
    }
  });

  it("refuse malformed ones", () => {
    expectInvalid(decodeSessionListEvent("{"), "bad_json");
    expectInvalid(decodeSessionListEvent('{"type":"renamed"}'), "bad_payload");
    expectInvalid(decodeSessionListEvent('{"type":"removed","id":"x"}'), "bad_payload");
    expectInvalid(decodeSessionListEvent('{"type":"snapshot","sessions":[{}]}'), "bad_payload");
    expectInvalid(decodeSessionListEvent(bytes("{}") as unknown as string), "not_text");
  });
});
