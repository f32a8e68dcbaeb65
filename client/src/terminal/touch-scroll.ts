/**
 * One-finger vertical drags over the terminal scroll its scrollback (xterm.js has no touch
 * scrolling of its own): the content follows the finger row by row, and a flick keeps going and
 * slows down. What it leaves alone:
 * - a tap (movement under DRAG_THRESHOLD_PX): xterm focuses the terminal as for a click;
 * - a long press (held LONG_PRESS_MS before moving): the browser's selection gesture;
 * - two fingers (pinch zoom) and mostly sideways drags;
 * - the alternate screen: it has no scrollback. A full-screen program that turned mouse tracking
 *   on reads its own input, and one that did not gets nothing either (no arrow keys are invented:
 *   in an editor or a pager they would move the cursor, which a scroll gesture should not).
 */
import type { Terminal } from "@xterm/xterm";

/** Movement under this is a tap with a wobbly finger, not a drag. */
export const DRAG_THRESHOLD_PX = 8;
/** A finger held still this long is selecting text (long-press), so its drag is not a scroll. */
export const LONG_PRESS_MS = 500;
/** A flick's speed is measured over the last part of the drag only: older movement says little. */
export const VELOCITY_WINDOW_MS = 100;
/** Momentum keeps this share of its speed per 16 ms frame: about a second for a quick flick. */
export const MOMENTUM_DECAY_PER_FRAME = 0.95;
/** Below this speed (px per ms) momentum stops: less than a row per half second. */
export const MOMENTUM_MIN_SPEED = 0.04;
/** The frame length MOMENTUM_DECAY_PER_FRAME is stated for. */
const FRAME_MS = 16;

export type TouchScrollTerminal = Pick<Terminal, "scrollLines" | "rows" | "buffer" | "element" | "options">;

export type TouchScrollOptions = {
  now?: () => number;
  requestFrame?: (callback: () => void) => number;
  cancelFrame?: (handle: number) => void;
  /** px per terminal row; measured from the rendered screen by default */
  rowHeight?: () => number;
};

type Gesture = {
  startX: number;
  startY: number;
  startTime: number;
  lastY: number;
  mode: "pending" | "dragging" | "ignored";
  samples: { t: number; y: number }[];
};

function measuredRowHeight(terminal: TouchScrollTerminal): number {
  const screen = terminal.element?.querySelector(".xterm-screen");
  const height = screen ? screen.clientHeight / terminal.rows : 0;
  // Not laid out yet: the font size is the closest guess.
  return height > 0 ? height : (terminal.options.fontSize ?? 14) * (terminal.options.lineHeight ?? 1);
}

/** Starts listening on `element` (the terminal's host); returns the function that stops. */
export function makeTouchScroll(element: HTMLElement, terminal: TouchScrollTerminal, options: TouchScrollOptions = {}): () => void {
  const now = options.now ?? (() => performance.now());
  const requestFrame = options.requestFrame ?? ((callback) => requestAnimationFrame(callback));
  const cancelFrame = options.cancelFrame ?? ((handle) => cancelAnimationFrame(handle));
  const rowHeight = options.rowHeight ?? (() => measuredRowHeight(terminal));
  let gesture: Gesture | null = null;
  /** pixels moved but not yet a whole row; positive: the finger went down (content moves down) */
  let carry = 0;
  let momentum: { handle: number; speed: number; last: number } | null = null;

  function scrollBy(px: number): void {
    carry += px;
    const height = rowHeight();
    const rows = Math.trunc(carry / height);
    if (rows === 0) return;
    carry -= rows * height;
    // Finger down = look further back = scroll up.
    terminal.scrollLines(-rows);
  }

  function stopMomentum(): void {
    if (momentum) cancelFrame(momentum.handle);
    momentum = null;
  }

  function glide(): void {
    if (!momentum) return;
    const t = now();
    const dt = t - momentum.last;
    momentum.last = t;
    scrollBy(momentum.speed * dt);
    momentum.speed *= MOMENTUM_DECAY_PER_FRAME ** (dt / FRAME_MS);
    if (Math.abs(momentum.speed) < MOMENTUM_MIN_SPEED) return stopMomentum();
    momentum.handle = requestFrame(glide);
  }

  const onStart = (event: TouchEvent) => {
    stopMomentum();
    carry = 0;
    const touch = event.touches.length === 1 ? event.touches[0] : undefined;
    gesture = touch
      ? { startX: touch.clientX, startY: touch.clientY, startTime: now(), lastY: touch.clientY, mode: "pending", samples: [] }
      : null;
  };

  const onMove = (event: TouchEvent) => {
    const touch = event.touches.length === 1 ? event.touches[0] : undefined;
    if (!gesture || !touch) {
      gesture = null;
      return;
    }
    if (gesture.mode === "pending") {
      const dx = touch.clientX - gesture.startX;
      const dy = touch.clientY - gesture.startY;
      if (Math.max(Math.abs(dx), Math.abs(dy)) < DRAG_THRESHOLD_PX) return;
      const selecting = now() - gesture.startTime >= LONG_PRESS_MS;
      const sideways = Math.abs(dx) > Math.abs(dy);
      gesture.mode = selecting || sideways || terminal.buffer.active.type === "alternate" ? "ignored" : "dragging";
      gesture.lastY = gesture.startY;
    }
    if (gesture.mode !== "dragging") return;
    // Ours now: no page scroll, no pull-to-refresh, no click at the end.
    if (event.cancelable) event.preventDefault();
    const t = now();
    scrollBy(touch.clientY - gesture.lastY);
    gesture.lastY = touch.clientY;
    gesture.samples.push({ t, y: touch.clientY });
    while (gesture.samples.length > 2 && t - gesture.samples[0]!.t > VELOCITY_WINDOW_MS) gesture.samples.shift();
  };

  const onEnd = () => {
    const ended = gesture;
    gesture = null;
    if (ended?.mode !== "dragging" || ended.samples.length < 2) return;
    const first = ended.samples[0]!;
    const last = ended.samples[ended.samples.length - 1]!;
    const t = now();
    // A finger that stopped before lifting flicks nothing.
    if (t - last.t > VELOCITY_WINDOW_MS || last.t === first.t) return;
    const speed = (last.y - first.y) / (last.t - first.t);
    if (Math.abs(speed) < MOMENTUM_MIN_SPEED) return;
    momentum = { speed, last: t, handle: requestFrame(glide) };
  };

  const passive = { passive: true, capture: true };
  element.addEventListener("touchstart", onStart, passive);
  element.addEventListener("touchmove", onMove, { passive: false, capture: true });
  element.addEventListener("touchend", onEnd, passive);
  element.addEventListener("touchcancel", onEnd, passive);
  return () => {
    stopMomentum();
    element.removeEventListener("touchstart", onStart, passive);
    element.removeEventListener("touchmove", onMove, { capture: true });
    element.removeEventListener("touchend", onEnd, passive);
    element.removeEventListener("touchcancel", onEnd, passive);
  };
}
