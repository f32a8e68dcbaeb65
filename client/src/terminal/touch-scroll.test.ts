import { describe, expect, it } from "vitest";
import { DRAG_THRESHOLD_PX, LONG_PRESS_MS, makeTouchScroll, type TouchScrollTerminal } from "./touch-scroll.ts";

const ROW = 20;

type Listener = (event: TouchEvent) => void;

/** A host element, a terminal that records scrollLines, a clock and a frame queue under the test's control. */
function setUp(buffer: "normal" | "alternate" = "normal") {
  const listeners = new Map<string, Listener>();
  const element = {
    addEventListener: (type: string, listener: Listener) => listeners.set(type, listener),
    removeEventListener: (type: string) => listeners.delete(type),
  } as unknown as HTMLElement;
  const scrolled: number[] = [];
  const terminal = {
    scrollLines: (n: number) => void scrolled.push(n),
    rows: 24,
    buffer: { active: { type: buffer } },
    element: undefined,
    options: {},
  } as unknown as TouchScrollTerminal;
  let clock = 0;
  let frames: (() => void)[] = [];
  const stop = makeTouchScroll(element, terminal, {
    now: () => clock,
    requestFrame: (callback) => frames.push(callback),
    cancelFrame: () => void (frames = []),
    rowHeight: () => ROW,
  });
  let prevented = 0;
  const fire = (type: string, points: { x?: number; y: number }[]) =>
    listeners.get(type)?.({
      touches: points.map((p) => ({ clientX: p.x ?? 100, clientY: p.y })),
      cancelable: true,
      preventDefault: () => void prevented++,
    } as unknown as TouchEvent);
  return {
    scrolled,
    total: () => scrolled.reduce((a, b) => a + b, 0),
    prevented: () => prevented,
    listeners,
    stop,
    advance: (ms: number) => void (clock += ms),
    /** runs queued animation frames, 16 ms apart, until momentum stops (or a bound) */
    runFrames(limit = 1000) {
      let ran = 0;
      while (frames.length > 0 && ran++ < limit) {
        clock += 16;
        const next = frames;
        frames = [];
        for (const frame of next) frame();
      }
      return ran;
    },
    /** a drag from y0 to y1 in `steps` moves, `msPerStep` apart; the finger stays down */
    drag(y0: number, y1: number, steps = 10, msPerStep = 10, x?: (i: number) => number) {
      fire("touchstart", [{ y: y0 }]);
      for (let i = 1; i <= steps; i++) {
        clock += msPerStep;
        fire("touchmove", [{ y: y0 + ((y1 - y0) * i) / steps, x: x?.(i) }]);
      }
    },
    lift: () => fire("touchend", []),
    fire,
  };
}

describe("makeTouchScroll", () => {
  it("scrolls back one row per row height the finger moves down, and forward when it moves up", () => {
    const t = setUp();
    t.drag(100, 100 + 5 * ROW, 10, 50);
    expect(t.total()).toBe(-5);
    expect(t.prevented()).toBeGreaterThan(0);
    t.advance(200); // held still, then lifted: no flick
    t.lift();
    expect(t.runFrames()).toBe(0);
    t.drag(300, 300 - 3 * ROW, 6, 50);
    t.advance(200);
    t.lift();
    expect(t.total()).toBe(-2);
  });

  it("keeps a quick flick going and lets it slow to a stop", () => {
    const t = setUp();
    t.drag(100, 100 + 10 * ROW, 10, 5);
    const during = t.total();
    t.lift();
    const frames = t.runFrames();
    expect(frames).toBeGreaterThan(5);
    expect(frames).toBeLessThan(1000);
    expect(t.total()).toBeLessThan(during);
  });

  it("leaves a tap alone: no scroll and no preventDefault (xterm focuses as on a click)", () => {
    const t = setUp();
    t.drag(100, 100 + DRAG_THRESHOLD_PX - 1, 3);
    t.lift();
    expect([t.scrolled, t.prevented()]).toEqual([[], 0]);
  });

  it("leaves a long press that then moves to the browser's selection", () => {
    const t = setUp();
    t.fire("touchstart", [{ y: 100 }]);
    t.advance(LONG_PRESS_MS);
    for (let i = 1; i <= 5; i++) t.fire("touchmove", [{ y: 100 + i * ROW }]);
    expect([t.scrolled, t.prevented()]).toEqual([[], 0]);
  });

  it("leaves sideways drags, two fingers and the alternate screen alone", () => {
    const sideways = setUp();
    sideways.drag(100, 100 + ROW, 5, 10, (i) => 100 + i * 20);
    expect(sideways.scrolled).toEqual([]);

    const pinch = setUp();
    pinch.fire("touchstart", [{ y: 100 }, { y: 300 }]);
    pinch.fire("touchmove", [{ y: 50 }, { y: 350 }]);
    expect([pinch.scrolled, pinch.prevented()]).toEqual([[], 0]);

    const fullScreen = setUp("alternate");
    fullScreen.drag(100, 100 + 5 * ROW);
    fullScreen.lift();
    expect([fullScreen.scrolled, fullScreen.prevented(), fullScreen.runFrames()]).toEqual([[], 0, 0]);
  });

  it("a new touch stops the glide, and dispose removes every listener", () => {
    const t = setUp();
    t.drag(100, 100 + 10 * ROW, 10, 5);
    t.lift();
    t.fire("touchstart", [{ y: 100 }]);
    expect(t.runFrames()).toBe(0);
    t.stop();
    expect(t.listeners.size).toBe(0);
  });
});
