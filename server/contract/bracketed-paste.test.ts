import { describe, expect, it } from "vitest";
import { bracketPasteBytes, bracketPasteText, stripPasteMarkerBytes, stripPasteMarkers } from "./bracketed-paste.ts";
import { hex, toHex } from "../testing/hex.ts";

describe("bracketed paste", () => {
  it("wraps text between ESC [ 200 ~ and ESC [ 201 ~", () => {
    expect(toHex(bracketPasteBytes(hex("61 0a 62")))).toBe("1b 5b 32 30 30 7e 61 0a 62 1b 5b 32 30 31 7e");
    expect(bracketPasteText("a\nb")).toBe("\x1b[200~a\nb\x1b[201~");
  });

  it("removes start and end markers inside the text, so nothing escapes the paste", () => {
    expect(stripPasteMarkers("a\nb\x1b[201~c\x1b[200~d")).toBe("a\nbcd");
    // x ESC[201~ y  →  ESC[200~ x y ESC[201~
    expect(toHex(bracketPasteBytes(hex("78 1b 5b 32 30 31 7e 79")))).toBe("1b 5b 32 30 30 7e 78 79 1b 5b 32 30 31 7e");
  });

  it("removes a marker that removing another one joins together", () => {
    // ESC [ 2 0 + ESC [ 200 ~ + 1 ~ becomes ESC [ 201 ~ once the inner marker is gone.
    expect(stripPasteMarkers("ok\x1b[20\x1b[200~1~run")).toBe("okrun");
    expect(toHex(stripPasteMarkerBytes(hex("6f 1b 5b 32 30 1b 5b 32 30 30 7e 31 7e 72")))).toBe("6f 72");
    expect(stripPasteMarkers("\x1b[2\x1b[201~01~\x1b[201~")).toBe("");
  });

  it("leaves every other byte alone, invalid UTF-8 and lone escapes included", () => {
    const odd = hex("ff fe 1b 5b 32 30 30 1b 5b 32 30 31 78 c3");
    expect(stripPasteMarkerBytes(odd)).toBe(odd);
    expect(toHex(bracketPasteBytes(hex("ff 1b 5b 32 30 30 7e c3 28")))).toBe("1b 5b 32 30 30 7e ff c3 28 1b 5b 32 30 31 7e");
    expect(toHex(bracketPasteBytes(hex("")))).toBe("1b 5b 32 30 30 7e 1b 5b 32 30 31 7e");
  });
});
