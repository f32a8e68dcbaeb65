import { describe, expect, it } from "vitest";
import { Emitter } from "./emitter.ts";

type Events = { tick: [number] };

describe("Emitter", () => {
  it("calls listeners in registration order, a `first` one before those already there", () => {
    const e = new Emitter<Events>();
    const seen: string[] = [];
    e.on("tick", (n) => seen.push(`a${n}`));
    e.on("tick", (n) => seen.push(`b${n}`));
    e.on("tick", (n) => seen.push(`first${n}`), { first: true });
    e.emit("tick", 1);
    expect(seen).toEqual(["first1", "a1", "b1"]);
  });

  it("registers a listener once, however often it is added, and one unsubscribe removes it", () => {
    const e = new Emitter<Events>();
    let calls = 0;
    const listener = () => void calls++;
    const off = e.on("tick", listener);
    e.on("tick", listener);
    e.emit("tick", 0);
    expect(calls).toBe(1);
    expect(e.listenerCount("tick")).toBe(1);
    off();
    off();
    e.emit("tick", 0);
    expect(calls).toBe(1);
    expect(e.listenerCount("tick")).toBe(0);
  });

  it("an emit calls the listeners there were when it began, whatever they add or remove", () => {
    const e = new Emitter<Events>();
    const seen: string[] = [];
    let offB = () => {};
    e.on("tick", (n) => {
      seen.push(`a${n}`);
      if (n === 1) {
        offB();
        e.on("tick", (m) => seen.push(`late${m}`));
      }
    });
    offB = e.on("tick", (n) => seen.push(`b${n}`));
    e.emit("tick", 1);
    e.emit("tick", 2);
    expect(seen).toEqual(["a1", "b1", "a2", "late2"]);
  });

  it("an unsubscribe of a listener that is gone leaves the others alone", () => {
    const e = new Emitter<Events>();
    const seen: number[] = [];
    const offA = e.on("tick", () => seen.push(1));
    e.clear();
    e.on("tick", () => seen.push(2));
    offA();
    e.emit("tick", 0);
    expect(seen).toEqual([2]);
  });
});
