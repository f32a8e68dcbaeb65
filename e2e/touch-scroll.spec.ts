/**
 * Touch scrolling on a phone: a finger dragged down over the terminal scrolls back through its
 * scrollback and dragged up comes back; a tap still focuses the terminal, a drag does not (no
 * keyboard popping up while reading); in the alternate screen a drag sends the program nothing.
 * Touches are real touch events from CDP (Input.dispatchTouchEvent), as a phone's finger makes.
 */
import type { CDPSession, Page } from "@playwright/test";
import { expect, test } from "./fixtures.ts";
import { createSession, logIn, openTerminal, recordTerminalFrames, stats, typeInTerminal, waitForText } from "./terminal-helpers.ts";

test.use({ viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true });

/** How far each drag moves the finger, in CSS px. */
const DRAG_PX = 300;
/** Input frames (0x00) carry keys to the program. */
const INPUT_FRAME = 0x00;

type PageGlobals = { document: { activeElement: { className: string } | null; querySelector(s: string): { clientHeight: number } | null } };
type Scroll = { viewportY: number; baseY: number; rows: number };

async function scrollState(page: Page): Promise<Scroll> {
  const s = (await stats(page)) as unknown as Scroll;
  return { viewportY: s.viewportY, baseY: s.baseY, rows: s.rows };
}

async function rowHeight(page: Page): Promise<number> {
  const { rows } = await scrollState(page);
  const screen = await page.evaluate(() => (globalThis as unknown as PageGlobals).document.querySelector(".term-host .xterm-screen")?.clientHeight ?? 0);
  return screen / rows;
}

const focusedClass = (page: Page) => page.evaluate(() => (globalThis as unknown as PageGlobals).document.activeElement?.className ?? "");

/** A one-finger drag from the middle of the terminal, `dy` px down (negative: up), in ten moves. */
async function drag(page: Page, cdp: CDPSession, dy: number): Promise<void> {
  const box = (await page.locator(".term-host").boundingBox())!;
  const x = box.x + box.width / 2;
  const y0 = box.y + box.height / 2 - dy / 2;
  await cdp.send("Input.dispatchTouchEvent", { type: "touchStart", touchPoints: [{ x, y: y0 }] });
  for (let i = 1; i <= 10; i++) {
    await cdp.send("Input.dispatchTouchEvent", { type: "touchMove", touchPoints: [{ x, y: y0 + (dy * i) / 10 }] });
  }
  await cdp.send("Input.dispatchTouchEvent", { type: "touchEnd", touchPoints: [] });
}

async function tap(page: Page, cdp: CDPSession): Promise<void> {
  const box = (await page.locator(".term-host").boundingBox())!;
  const point = { x: box.x + box.width / 2, y: box.y + box.height / 2 };
  await cdp.send("Input.dispatchTouchEvent", { type: "touchStart", touchPoints: [point] });
  await cdp.send("Input.dispatchTouchEvent", { type: "touchEnd", touchPoints: [] });
}

test("a finger drag scrolls the scrollback; a drag does not focus, a tap does", async ({ page, server }) => {
  const session = await createSession(server);
  await logIn(page.context(), server);
  await openTerminal(page, server, session.id);
  await typeInTerminal(page, "for i in $(seq 1 200); do echo line-$i; done\r");
  await waitForText(page, /^line-200$/m);
  await page.locator(".term-host .xterm-helper-textarea").blur();
  const bottom = await scrollState(page);
  expect(bottom.viewportY).toBe(bottom.baseY);
  const rowsPerDrag = Math.floor(DRAG_PX / (await rowHeight(page)));
  const cdp = await page.context().newCDPSession(page);

  await drag(page, cdp, DRAG_PX);
  // At least the rows the finger covered (a flick glides further, never back).
  await expect.poll(() => scrollState(page).then((s) => bottom.baseY - s.viewportY)).toBeGreaterThanOrEqual(rowsPerDrag);
  expect(await focusedClass(page)).not.toContain("xterm-helper-textarea");

  for (let i = 0; i < 4; i++) await drag(page, cdp, -DRAG_PX);
  await expect.poll(() => scrollState(page).then((s) => s.viewportY)).toBe(bottom.baseY);

  await tap(page, cdp);
  await expect.poll(() => focusedClass(page)).toContain("xterm-helper-textarea");
});

test("in the alternate screen a drag scrolls nothing and sends the program nothing", async ({ page, server }) => {
  const session = await createSession(server);
  await logIn(page.context(), server);
  const frames = recordTerminalFrames(page);
  await openTerminal(page, server, session.id);
  await typeInTerminal(page, "for i in $(seq 1 100); do echo line-$i; done; printf '\\e[?1049h\\e[Hfull-%s' $((6*7)); read\r");
  await waitForText(page, /^full-42/m);
  const before = await scrollState(page);
  const inputs = frames.sent.filter((f) => f.opcode === INPUT_FRAME).length;
  const cdp = await page.context().newCDPSession(page);

  await drag(page, cdp, DRAG_PX);
  await drag(page, cdp, -DRAG_PX);
  // The drags were handled (or not) synchronously with their events; a later key proves the page
  // is still sending, so a stray arrow key from the drags would have been sent before it.
  await typeInTerminal(page, "x");
  await expect.poll(() => frames.sent.filter((f) => f.opcode === INPUT_FRAME).length).toBe(inputs + 1);
  expect(frames.sent.filter((f) => f.opcode === INPUT_FRAME).at(-1)!.payload.subarray(1).toString()).toBe("x");
  expect(await scrollState(page)).toEqual(before);
});
