import { describe, expect, it } from "vitest";
import {
  CloseCode,
  MAX_LABEL_CHARS,
  colorSchemeReport,
  isValidClientId,
  isValidGeneration,
  isValidSessionId,
  isValidSubmissionId,
  parseOffset,
  sanitizeLabel,
} from "./protocol.ts";
import { encodeUtf8 } from "./utf8.ts";
import { toHex } from "../testing/hex.ts";

describe("close codes", () => {
  it("match docs/protocol.md § Close codes", () => {
    expect(CloseCode).toEqual({ POLICY: 1008, INTERNAL: 1011, NOT_FOUND: 4404, TOO_SLOW: 4408, MOVED: 4409, EXITED: 4410 });
  });
});

describe("client and submission IDs", () => {
  const cases: [string, boolean][] = [
    ["abcdefgh", true],
    ["A-b_9".padEnd(8, "x"), true],
    ["a".repeat(64), true],
    ["a".repeat(7), false],
    ["a".repeat(65), false],
    ["abcdefg!", false],
    ["abcd efgh", false],
    ["abcdefgh\n", false],
    ["äbcdefgh", false],
    ["", false],
  ];
  it.each(cases)("%j → %s", (id, valid) => {
    expect(isValidClientId(id)).toBe(valid);
    expect(isValidSubmissionId(id)).toBe(valid);
  });
  it("rejects non-strings", () => {
    for (const value of [null, undefined, 12345678, ["abcdefgh"], { id: "abcdefgh" }]) {
      expect(isValidClientId(value)).toBe(false);
      expect(isValidSubmissionId(value)).toBe(false);
    }
  });
});

describe("session IDs", () => {
  const cases: [unknown, boolean][] = [
    ["abc12345", true],
    ["00000000", true],
    ["abc1234", false],
    ["abc123456", false],
    ["ABC12345", false],
    ["abc-1234", false],
    ["abc12345\n", false],
    [12345678, false],
  ];
  it.each(cases)("%j → %s", (id, valid) => expect(isValidSessionId(id)).toBe(valid));
});

describe("generations", () => {
  it("are non-empty strings of at most 128 characters", () => {
    expect(isValidGeneration("boot1.1")).toBe(true);
    expect(isValidGeneration("g".repeat(128))).toBe(true);
    expect(isValidGeneration("g".repeat(129))).toBe(false);
    expect(isValidGeneration("")).toBe(false);
    expect(isValidGeneration(1)).toBe(false);
  });
});

describe("sanitizeLabel", () => {
  it("keeps an ordinary label", () => expect(sanitizeLabel("Pixel 8 · Chrome")).toBe("Pixel 8 · Chrome"));
  it("removes C0, DEL and C1 controls", () => {
    expect(sanitizeLabel("a\x00b\x07c\x1b[31md\x7fe\x80f\x9bg\x9fh\ti\nj")).toBe("abc[31mdefghij");
  });
  it("keeps characters just outside the control ranges", () => {
    expect(sanitizeLabel(" ~\u00a0é")).toBe(" ~\u00a0é");
  });
  it("cuts 41 characters to 40", () => {
    expect(sanitizeLabel("x".repeat(41))).toBe("x".repeat(40));
    expect(sanitizeLabel("x".repeat(40))).toBe("x".repeat(40));
  });
  it("cuts after removing controls, so controls do not use up the budget", () => {
    expect(sanitizeLabel("\x1b".repeat(10) + "y".repeat(40))).toBe("y".repeat(40));
  });
  it("counts code points, never splitting an astral character", () => {
    const label = "😀".repeat(41); // 82 UTF-16 units
    const cut = sanitizeLabel(label);
    expect(Array.from(cut)).toHaveLength(MAX_LABEL_CHARS);
    expect(cut).toBe("😀".repeat(40));
    expect(toHex(encodeUtf8(cut).subarray(-4))).toBe("f0 9f 98 80");
  });
  it("makes an absent label empty", () => {
    expect(sanitizeLabel(null)).toBe("");
    expect(sanitizeLabel(undefined)).toBe("");
  });
});

describe("parseOffset", () => {
  const cases: [string | null, number | null][] = [
    ["0", 0],
    ["12345", 12345],
    ["007", 7],
    [String(Number.MAX_SAFE_INTEGER), Number.MAX_SAFE_INTEGER],
    [String(Number.MAX_SAFE_INTEGER + 1), null],
    ["99999999999999999999999", null],
    ["-1", null],
    ["+5", null],
    ["1e3", null],
    ["0x10", null],
    ["1.5", null],
    [" 1", null],
    ["1 ", null],
    ["", null],
    [null, null],
  ];
  it.each(cases)("%j → %s", (raw, expected) => expect(parseOffset(raw)).toBe(expected));
});

describe("colorSchemeReport", () => {
  it("is CSI ? 997 ; 1 n for dark and ; 2 n for light", () => {
    expect(toHex(encodeUtf8(colorSchemeReport(true)))).toBe("1b 5b 3f 39 39 37 3b 31 6e");
    expect(colorSchemeReport(false)).toBe("\x1b[?997;2n");
  });
});
