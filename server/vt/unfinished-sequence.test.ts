import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { browserLikeTerminal, parsed, screenState, stateDifferences } from "../testing/screen-state.ts";
import { controlSequence, printableText } from "../testing/vt-grammar.ts";
import { TerminalScanner } from "./terminal-scanner.ts";
import { terminalSnapshot } from "./terminal-snapshot.js";
import { followedBy, MAX_UNFINISHED_SEQUENCE_BYTES, unfinishedTail } from "./unfinished-sequence.ts";

const RIS = "\x1bc";
const bytes = (s: string) => new TextEncoder().encode(s);
const latin1 = (b: Uint8Array) => Buffer.from(b).toString("latin1");

/** The tail a snapshot made after `stream` is followed by, `stream` scanned in `chunks` pieces. */
function tailAfter(stream: Uint8Array, chunks = 1): string {
  const scanner = new TerminalScanner();
  const step = Math.ceil(stream.length / chunks);
  for (let i = 0; i < stream.length; i += step) scanner.feed(stream.subarray(i, i + step));
  return latin1(unfinishedTail(stream, scanner.unfinishedSequence()));
}

describe("unfinishedTail: the bytes a snapshot made inside a sequence is followed by", () => {
  it("nothing at ground or after complete sequences and characters", () => {
    for (const s of ["", "plain", "\x1b[31mred", "漢", "\u{1F600}", "\x1b]0;title\x07", "\x1b]0;title\x1b\\", "\x1b(0"]) expect(tailAfter(bytes(s)), s).toBe("");
  });

  it("the unfinished escape sequence, wherever the chunks were cut", () => {
    for (const [stream, tail] of [
      ["ab\x1b", "\x1b"],
      ["ab\x1b[3", "\x1b[3"],
      ["ab\x1b[38;2;1;2", "\x1b[38;2;1;2"],
      ["\x1b[1mx\x1b[?10", "\x1b[?10"],
      ["x\x1b(", "\x1b("],
      ["x\x1b]0;half a ti", "\x1b]0;half a ti"],
      ["x\x1bP1$qm", "\x1bP1$qm"],
      // The ESC that ends a string is the start of what is unfinished: `\` would make it ST.
      ["x\x1b]0;title\x1b", "\x1b"],
      // An ESC inside a CSI starts a new sequence.
      ["x\x1b[3\x1b[4", "\x1b[4"],
    ]) {
      for (const chunks of [1, 2, 3, stream!.length]) expect(tailAfter(bytes(stream!), chunks), `${JSON.stringify(stream)} in ${chunks} chunks`).toBe(tail);
    }
  });

  it("without the C0 controls a terminal executes inside ESC and CSI (their effect is on the screen already)", () => {
    expect(tailAfter(bytes("x\x1b[3\r\n\x081"))).toBe("\x1b[31");
    expect(tailAfter(bytes("x\x1b\n(\x07"))).toBe("\x1b(");
    // In an OSC they are ignored, in a DCS they are payload: kept as they came.
    expect(tailAfter(bytes("x\x1b]0;a\nb"))).toBe("\x1b]0;a\nb");
  });

  it("the first bytes of an unfinished UTF-8 character", () => {
    const han = bytes("漢"); // 3 bytes
    const emoji = bytes("\u{1F600}"); // 4 bytes
    expect(tailAfter(bytes("x").subarray(0, 1))).toBe("");
    for (let k = 1; k < han.length; k++) expect(tailAfter(new Uint8Array([0x61, ...han.subarray(0, k)]))).toBe(latin1(han.subarray(0, k)));
    for (let k = 1; k < emoji.length; k++) expect(tailAfter(new Uint8Array([0x61, ...emoji.subarray(0, k)]))).toBe(latin1(emoji.subarray(0, k)));
    expect(tailAfter(bytes("é"))).toBe("");
  });

  it("nothing when the sequence began before the retained bytes or is longer than can be carried", () => {
    expect(latin1(unfinishedTail(bytes("[31"), { bytes: 5, executesControls: true }))).toBe("");
    const long = new Uint8Array(MAX_UNFINISHED_SEQUENCE_BYTES + 1).fill(0x61);
    expect(unfinishedTail(long, { bytes: long.length, executesControls: false }).length).toBe(0);
  });

  it("followedBy keeps a snapshot without tail a string and joins one with a tail as bytes", () => {
    expect(followedBy("snap", new Uint8Array(0))).toBe("snap");
    expect(latin1(followedBy("snap", bytes("\x1b[3")) as Uint8Array)).toBe("snap\x1b[3");
  });
});

/**
 * The property: a terminal that read output up to any byte, and a fresh one fed its snapshot and
 * the tail, agree after the rest of the output, cell by cell, modes and hidden state included.
 * Pieces a CSI split by a control, a half title, a DCS, are added to the grammar, since its own
 * sequences hold no C0 controls.
 */
describe("a snapshot made inside a sequence, followed by its tail, reads the rest as the original does", () => {
  const pieces = fc.constantFrom("\x1b[3\r\n1mred after a line feed\x1b[0m", "\x1b]0;a title\x07", "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "\x1bP1$qm\x1b\\", "\x1b[38;2;10;200;30mrgb\x1b[m");
  const output = fc.array(fc.oneof(printableText, controlSequence, pieces), { minLength: 1, maxLength: 30 }).map((parts) => bytes(parts.join("")));

  async function expectSameAfterCut(stream: Uint8Array, cut: number): Promise<void> {
    const original = browserLikeTerminal(20, 6, 100);
    const scanner = new TerminalScanner();
    original.write(stream.subarray(0, cut));
    scanner.feed(stream.subarray(0, cut));
    await parsed(original);
    const snapshot = followedBy(RIS + terminalSnapshot(original), unfinishedTail(stream.subarray(0, cut), scanner.unfinishedSequence()));
    const restored = browserLikeTerminal(20, 6, 100);
    restored.write(typeof snapshot === "string" ? bytes(snapshot) : snapshot);
    original.write(stream.subarray(cut));
    restored.write(stream.subarray(cut));
    await Promise.all([parsed(original), parsed(restored)]);
    expect(stateDifferences(screenState(original), screenState(restored)), `${JSON.stringify(latin1(stream))} cut at byte ${cut}`).toEqual([]);
  }

  it("cut at every byte of a colour split by a line feed, a title, a link, a DCS, CJK and emoji", async () => {
    const stream = bytes("ab\x1b[3\r\n1mred\x1b[0m\x1b]0;a title\x07\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\x1bP1$qm\x1b\\漢\u{1F600}\x1b[38;2;10;200;30mrgb");
    for (let cut = 0; cut <= stream.length; cut++) await expectSameAfterCut(stream, cut);
  });

  it("at any cut of random output (property)", async () => {
    await fc.assert(
      fc.asyncProperty(output, fc.double({ min: 0, max: 1, noNaN: true }), async (stream, where) => {
        await expectSameAfterCut(stream, Math.floor(where * stream.length));
      }),
      { numRuns: 300, seed: 1617 },
    );
  });
});
