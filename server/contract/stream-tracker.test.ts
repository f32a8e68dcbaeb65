import { describe, expect, it } from "vitest";
import { decodeServerFrame, encodeOutput, encodePosition, type ServerMessage } from "./frames.ts";
import { StreamTracker } from "./stream-tracker.ts";
import { hex } from "../testing/hex.ts";

const decode = (frame: Uint8Array) => decodeServerFrame(frame) as ServerMessage;

describe("StreamTracker", () => {
  it("counts output bytes after an append position from its start", () => {
    const t = new StreamTracker({ generation: "boot.1", offset: 10 });
    t.observe(decode(encodePosition({ generation: "boot.1", mode: "append", start: 10, end: 13, truncated: false })));
    t.observe(decode(hex("00 61 62 63"))); // output: abc
    expect(t.resumePoint()).toEqual({ generation: "boot.1", offset: 13 });
    t.observe(decode(encodeOutput(hex("e4 b8")))); // half a character still counts as two bytes
    expect(t.offset).toBe(15);
  });

  it("puts the offset at end after a reset snapshot", () => {
    const t = new StreamTracker({ generation: "old.3", offset: 99 });
    t.observe(decode(encodePosition({ generation: "boot.2", mode: "reset", start: 500, end: 500, truncated: true })));
    expect(t.resumePoint()).toEqual({ generation: "boot.2", offset: 500 });
    expect(t.replaying).toBe(true);
  });

  it("has no resume point before the first position frame", () => {
    expect(new StreamTracker().resumePoint()).toBeNull();
  });
});
