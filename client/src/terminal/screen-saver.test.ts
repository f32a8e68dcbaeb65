import type { Terminal } from "@xterm/xterm";
import { describe, expect, it } from "vitest";
import { browserLikeTerminal, parsed, screenState, stateDifferences } from "../../../server/testing/screen-state.ts";
import { makeReplayWriter } from "./replay-writer.ts";
import { copyBytes, storedCopy } from "./screen-saver.ts";

const encoder = new TextEncoder();
const latin1 = (b: Uint8Array) => String.fromCharCode(...b);
type Headless = ReturnType<typeof browserLikeTerminal>;

/** A terminal and the writer the view puts in front of it. */
function page() {
  const term = browserLikeTerminal(30, 6, 100);
  let rendered = -1;
  const writer = makeReplayWriter(term, { rendered: (_generation, offset) => (rendered = offset), replayParsed: () => {} });
  return { term, writer, rendered: () => rendered };
}

/** What the screen saver stores for `p` (its parsed screen and where it stands). */
const copyOf = (p: ReturnType<typeof page>) => storedCopy(p.term as unknown as Terminal, { generation: "g1", offset: p.rendered() }, p.writer.unfinishedTail());

/** Writes `bytes` as output chunks of `step` bytes, as they come from the socket, from stream offset `from`. */
function feed(p: ReturnType<typeof page>, bytes: Uint8Array, from: number, step: number): void {
  for (let i = 0; i < bytes.length; i += step) p.writer.output(bytes.subarray(i, i + step), "g1", from + Math.min(bytes.length, i + step));
}

const differences = (a: Headless, b: Headless) => stateDifferences(screenState(a), screenState(b));

describe("the stored copy, saved while the output ends inside a sequence", () => {
  // A colour split by a line feed, a title, a link, a DCS, CJK and emoji, then more text.
  const stream = encoder.encode(
    "ab\x1b[3\r\n1mred\x1b[0m \x1b]0;a title\x07\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\x1bP1$qm\x1b\\漢\u{1F600}\x1b[38;2;10;200;30mrgb\x1b[m end\r\n",
  );

  it("painted on a fresh page and followed by the rest (the append), equals a page that read it all, at every cut", async () => {
    const whole = page();
    feed(whole, stream, 0, stream.length);
    await parsed(whole.term);
    for (let cut = 0; cut <= stream.length; cut++) {
      for (const step of [1, 5, cut || 1]) {
        const saving = page();
        feed(saving, stream.subarray(0, cut), 0, step);
        await parsed(saving.term);
        const copy = copyOf(saving);
        expect(copy.offset).toBe(cut === 0 ? -1 : cut);

        const reloaded = page();
        reloaded.writer.writeCopy(copyBytes(copy), "g1", cut, () => {});
        await parsed(reloaded.term);
        // A copy saved by the reloaded page before any output carries the same tail.
        expect(latin1(reloaded.writer.unfinishedTail()), `cut at ${cut}`).toBe(latin1(copy.tail!));
        feed(reloaded, stream.subarray(cut), cut, 7);
        await parsed(reloaded.term);
        expect(differences(whole.term, reloaded.term), `${JSON.stringify(latin1(stream.subarray(0, cut)))} in chunks of ${step}`).toEqual([]);
      }
    }
  });

  it("carries the sequence's bytes so far, without the controls executed inside a CSI", async () => {
    for (const [before, tail] of [
      ["x\x1b[3\r\n", "\x1b[3"],
      ["x\x1b]0;half a ti", "\x1b]0;half a ti"],
      ["x\xe6\xbc", "\xe6\xbc"],
      ["x\x1b[31mred", ""],
    ]) {
      const saving = page();
      feed(saving, Uint8Array.from(before!, (c) => c.charCodeAt(0)), 0, 1);
      await parsed(saving.term);
      expect(latin1(copyOf(saving).tail!), JSON.stringify(before)).toBe(tail);
    }
  });
});
