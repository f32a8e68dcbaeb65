import { describe, expect, it } from "vitest";
import { applyModifiers, withCtrl } from "./modifiers.ts";

describe("key bar modifiers", () => {
  it("maps Ctrl+letter to its control character, either case", () => {
    expect(withCtrl("c")).toBe("\x03");
    expect(withCtrl("D")).toBe("\x04");
    expect(withCtrl("[")).toBe("\x1b");
    expect(withCtrl(" ")).toBe("\x00");
    expect(withCtrl("?")).toBe("\x7f");
  });
  it("leaves keys without a control form and multi-character input alone", () => {
    expect(withCtrl("1")).toBe("1");
    expect(withCtrl("\x1b[A")).toBe("\x1b[A");
    expect(withCtrl("paste")).toBe("paste");
  });
  it("Alt prefixes ESC, after Ctrl", () => {
    expect(applyModifiers("b", { ctrl: false, alt: true })).toBe("\x1bb");
    expect(applyModifiers("x", { ctrl: true, alt: true })).toBe("\x1b\x18");
    expect(applyModifiers("x", { ctrl: false, alt: false })).toBe("x");
  });
});
