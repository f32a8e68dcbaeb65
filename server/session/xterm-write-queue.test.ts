import xtermHeadless from "@xterm/headless";
import { describe, expect, it } from "vitest";
import { discardQueuedWrites } from "./xterm-write-queue.js";

const { Terminal } = xtermHeadless;

describe("discardQueuedWrites", () => {
  it("drops a backlog xterm would otherwise go on parsing after dispose", async () => {
    const term = new Terminal({ cols: 80, rows: 24, scrollback: 1000, allowProposedApi: true });
    let parsedChunks = 0;
    // Far more than one 12 ms parse slice: most of it is still queued when the write returns.
    for (let i = 0; i < 200; i++) term.write(`${"line of output ".repeat(60)}\r\n`.repeat(100), () => parsedChunks++);
    expect(discardQueuedWrites(term)).toBe(true);
    // Writes are parsed in order: once this one is parsed, anything still queued before it would have been too.
    await new Promise<void>((resolve) => term.write("after", resolve));
    expect(parsedChunks).toBe(0);
    expect(term.buffer.active.getLine(0)?.translateToString(true)).toBe("after");
    term.dispose();
  });

  it("reports false and touches nothing on an object without xterm's queue", () => {
    const other = { _core: { _writeBuffer: { _writeBuffer: "not an array" } } };
    expect(discardQueuedWrites(other)).toBe(false);
    expect(other._core._writeBuffer._writeBuffer).toBe("not an array");
    expect(discardQueuedWrites({})).toBe(false);
  });
});
