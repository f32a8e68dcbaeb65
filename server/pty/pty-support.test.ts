import { describe, expect, it } from "vitest";
import { PtyEventRelay } from "./pty-support.ts";

/** A runtime's read buffer: the relay gets views of it, and it is written over after each delivery. */
function lender(relay: PtyEventRelay): (text: string) => void {
  const readBuffer = Buffer.alloc(64);
  return (text) => {
    const n = readBuffer.write(text);
    relay.deliverData(readBuffer.subarray(0, n), true);
    readBuffer.fill(0x3f);
  };
}

describe("PtyEventRelay", () => {
  it("copies a lent chunk for an onData listener, which may keep it", () => {
    const relay = new PtyEventRelay();
    const kept: Uint8Array[] = [];
    relay.onData((chunk) => kept.push(chunk));
    const read = lender(relay);
    read("one");
    read("two");
    expect(kept.map((c) => Buffer.from(c).toString())).toEqual(["one", "two"]);
  });

  it("copies lent chunks that arrive before any listener", () => {
    const relay = new PtyEventRelay();
    const read = lender(relay);
    read("early");
    const kept: string[] = [];
    relay.onLentData((chunk) => kept.push(Buffer.from(chunk).toString()));
    expect(kept).toEqual(["early"]);
  });

  it("hands a lent chunk as it is to an onLentData listener", () => {
    const relay = new PtyEventRelay();
    const seen: Uint8Array[] = [];
    const during: string[] = [];
    relay.onLentData((chunk) => {
      seen.push(chunk);
      during.push(Buffer.from(chunk).toString());
    });
    const read = lender(relay);
    read("abc");
    read("de");
    expect(during).toEqual(["abc", "de"]);
    expect(seen[0]!.buffer).toBe(seen[1]!.buffer); // the same memory, no copy
  });

  it("passes owned chunks unchanged and nothing after the exit", () => {
    const relay = new PtyEventRelay();
    const kept: Uint8Array[] = [];
    relay.onData((chunk) => kept.push(chunk));
    const owned = Buffer.from("mine");
    relay.deliverData(owned);
    relay.deliverExit({ exitCode: 0, signal: null });
    relay.deliverData(Buffer.from("late"));
    expect(kept).toEqual([owned]);
    expect(kept[0]).toBe(owned);
  });
});
