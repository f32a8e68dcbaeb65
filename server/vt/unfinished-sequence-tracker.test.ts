import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { controlSequence, printableText } from "../testing/vt-grammar.ts";
import { TerminalScanner } from "./terminal-scanner.ts";
import { MAX_UNFINISHED_SEQUENCE_BYTES, unfinishedTail } from "./unfinished-sequence.ts";
import { UnfinishedSequenceTracker } from "./unfinished-sequence-tracker.ts";

const bytes = (s: string) => new TextEncoder().encode(s);
const latin1 = (b: Uint8Array) => Buffer.from(b).toString("latin1");

/** The tracker fed `stream` in chunks cut at `cuts`. */
function tracked(stream: Uint8Array, cuts: number[]): string {
  const tracker = new UnfinishedSequenceTracker();
  let from = 0;
  for (const cut of [...cuts.filter((c) => c > 0 && c < stream.length).sort((a, b) => a - b), stream.length]) {
    tracker.feed(stream.subarray(from, cut));
    from = cut;
  }
  return latin1(tracker.tail());
}

describe("UnfinishedSequenceTracker: the tail of a stream fed in chunks, as the session's scanner finds it", () => {
  it("equals the tail of the whole stream scanned at once, however it was cut (property)", () => {
    const pieces = fc.constantFrom("\x1b[3\r\n1m", "\x1b]0;a ti", "\x1bP1$q", "漢", "\u{1F600}", "\x1b", "\x1b(");
    const stream = fc.array(fc.oneof(printableText, controlSequence, pieces), { minLength: 1, maxLength: 20 }).map((parts) => bytes(parts.join("")));
    fc.assert(
      fc.property(stream, fc.array(fc.nat(), { maxLength: 12 }), fc.double({ min: 0, max: 1, noNaN: true }), (whole, cuts, where) => {
        const s = whole.subarray(0, Math.floor(where * whole.length));
        const scanner = new TerminalScanner();
        scanner.feed(s);
        const expected = latin1(unfinishedTail(s, scanner.unfinishedSequence()));
        expect(tracked(s, cuts.map((c) => c % (s.length + 1)))).toBe(expected);
      }),
      { numRuns: 500, seed: 1618 },
    );
  });

  it("keeps a sequence that spans many chunks, drops one too long to carry, and is back at ground after it", () => {
    const title = bytes("x\x1b]0;" + "t".repeat(5000));
    expect(tracked(title, Array.from({ length: 50 }, (_, i) => i * 100))).toBe("\x1b]0;" + "t".repeat(5000));
    const tracker = new UnfinishedSequenceTracker();
    tracker.feed(bytes("\x1b]52;c;"));
    const chunk = new Uint8Array(64 * 1024).fill(0x41);
    for (let fed = 0; fed <= MAX_UNFINISHED_SEQUENCE_BYTES; fed += chunk.length) tracker.feed(chunk);
    expect(tracker.tail().length).toBe(0);
    // Its BEL ends it with no ESC after: at ground again, where two bytes of 漢 are unfinished.
    tracker.feed(Uint8Array.of(0x07, 0x61, 0xe6, 0xbc));
    expect(latin1(tracker.tail())).toBe("\xe6\xbc");
    tracker.feed(bytes("\x1b]52;c;"));
    for (let fed = 0; fed <= MAX_UNFINISHED_SEQUENCE_BYTES; fed += chunk.length) tracker.feed(chunk);
    tracker.feed(bytes("\x07ok\x1b[3"));
    expect(latin1(tracker.tail())).toBe("\x1b[3");
  });
});
