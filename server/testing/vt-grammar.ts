/**
 * A grammar of terminal output for property tests (docs/design.md § Snapshots): printable text
 * (Latin, CJK, emoji) and the CSI, ESC and OSC sequences whose state a snapshot must carry. Shared
 * by the snapshot writer's own property (server/session/terminal-snapshot.test.ts) and the one
 * through the real server (server/hub/screen-fidelity.property.test.ts), so both test one language.
 */
import fc from "fast-check";

/** A run of printable characters: narrow, accented, CJK and emoji (two cells each). */
export const printableText = fc.stringMatching(/^[a-z \u00e9\u6f22\u{1F600}]{0,12}$/u);

/** One control sequence or control character. */
export const controlSequence = fc.oneof(
  fc.tuple(fc.integer({ min: 0, max: 12 }), fc.integer({ min: 0, max: 45 })).map(([r, c]) => `\x1b[${r};${c}H`),
  fc.constantFrom("A", "B", "C", "D", "K", "J", "L", "M", "P", "@", "X", "S", "T", "G").chain((f) => fc.integer({ min: 0, max: 5 }).map((n) => `\x1b[${n}${f}`)),
  fc.tuple(fc.integer({ min: 1, max: 10 }), fc.integer({ min: 1, max: 10 })).map(([a, b]) => `\x1b[${Math.min(a, b)};${Math.max(a, b)}r`),
  fc.constantFrom(1, 4, 5, 7, 22, 24, 27, 31, 42, 93, 0).map((n) => `\x1b[${n}m`),
  // Not ?7: a wide character printed at the right margin with autowrap off leaves a cell state
  // no sequence recreates (docs/design.md § Snapshots, what is not restored).
  fc.constantFrom("?6", "4", "?1", "?25", "?1000", "?1006", "?2004", "?1049", "?47").chain((m) => fc.boolean().map((on) => `\x1b[${m}${on ? "h" : "l"}`)),
  fc.constantFrom("\x1b7", "\x1b8", "\x1b(0", "\x1b(B", "\x1b)0", "\x0e", "\x0f", "\x1bH", "\x1b[3g", "\x1b[g", "\x1bM", "\x1bD", "\x1bE", "\r", "\n", "\t", "\b", "\x1b[2 q", "\x1b=", "\x1b>"),
  fc.constantFrom("\x1b]0;title\x07", "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\"),
);

/** Terminal output: up to `maxParts` pieces of text and control sequences, concatenated. */
export function terminalOutput(maxParts = 40): fc.Arbitrary<string> {
  return fc.array(fc.oneof(printableText, controlSequence), { maxLength: maxParts }).map((parts) => parts.join(""));
}
