import { describe, expect, it } from "vitest";
import { plainText } from "./plain-text.js";

describe("plainText", () => {
  it("drops CSI, OSC and other ESC sequences, SI/SO and other C0 controls", () => {
    expect(plainText("\x1b7\x1b[31merror\x1b[0m\x1b8\x1b(B\x0f: gone\x1b]0;title\x07")).toBe("error: gone");
  });

  it("keeps tabs and line ends", () => {
    expect(plainText("a\tb\r\nc\nd")).toBe("a\tb\r\nc\nd");
  });

  it("reads the cursor moves Claude Code draws word gaps with (CSI n G, CSI n C) as spaces", () => {
    // What the real 2.1.197 prints for a resume of a missing conversation, up to the id.
    expect(plainText("\x1b[2G\x1b[95mNo\x1b[5Gconversation\x1b[18Gfound\x1b[24Gwith\x1b[39m")).toBe(" No conversation found with");
    expect(plainText("No\x1b[Cconversation\x1b[3Cfound")).toBe("No conversation   found");
  });

  it("starts counting columns again after a line end, and ignores moves backwards", () => {
    expect(plainText("long line\r\nab\x1b[4Gc\x1b[1Gd")).toBe("long line\r\nab cd");
  });

  it("caps a long cursor move (a column jump) instead of padding with a line of spaces", () => {
    expect(plainText("a\x1b[200Cb")).toBe(`a${" ".repeat(8)}b`);
  });
});
