import { describe, expect, it } from "vitest";
import { outputText } from "./output-text.ts";

describe("outputText", () => {
  it("turns CRLF into LF and leaves plain text alone", () => {
    expect(outputText("a\r\nb\r\n", true)).toBe("a\nb\n");
    expect(outputText("tab\tand ünïcode 世界 🙂\n", true)).toBe("tab\tand ünïcode 世界 🙂\n");
  });

  it("removes colours, OSC titles and hyperlinks, and other escape sequences", () => {
    const coloured = "\x1b[1;31merror\x1b[0m: \x1b]8;;https://x.test\x07link\x1b]8;;\x07 \x1b]0;title\x1b\\\x1b(Bdone\x1b[?25h\r\n";
    expect(outputText(coloured, true)).toBe("error: link done\n");
  });

  it("keeps the final text of a line a progress bar redrew with CR, BS and erase-line", () => {
    expect(outputText("downloading  10%\rdownloading  55%\rdownloading 100%\r\n", true)).toBe("downloading 100%\n");
    expect(outputText("working...\r\x1b[Kdone\n", true)).toBe("done\n");
    expect(outputText("long status line\rshort\x1b[K\n", true)).toBe("short\n");
    expect(outputText("abc\b\bXY\n", true)).toBe("aXY\n");
    expect(outputText("[    ]\x1b[2G==\x1b[2C|\n", true)).toBe("[==  |\n");
    expect(outputText("spinner |\b/\b-\b\\\bdone\n", true)).toBe("spinner done\n");
  });

  it("keeps a last line without newline, and the bytes as they were when not stripping", () => {
    expect(outputText("no newline", true)).toBe("no newline");
    expect(outputText("\x1b[31mred\x1b[0m\r\n50%\r100%\r\n", false)).toBe("\x1b[31mred\x1b[0m\n50%\r100%\n");
  });
});
