/**
 * A session whose 4 MiB ring is full: a fresh tab gets the whole ring as its reset snapshot behind
 * the "Restoring…" overlay; a reload paints its IndexedDB copy and resumes with `append`, receiving
 * no snapshot and only the stream's framing. Correctness only: the time to first paint is a figure
 * of `npm run bench` (bench/paint-time.ts), measured there next to its baselines.
 */
import { expect, test, type WebmuxServer } from "./fixtures.ts";
import { createSession, logIn, recordTerminalFrames, stats, terminalLines, waitForPhase, waitForText } from "./terminal-helpers.ts";

/** The server's default ring. */
const RING_BYTES = 4 * 1024 * 1024;
/** Output just under the ring (with the PTY's \r per line), so nothing is truncated and the replay is all of it. */
const OUTPUT_BYTES = 4_150_000;
/** A 4 MiB replay on a busy CI machine can take seconds; this bounds a wedge, it does not race. */
const SLOW_MS = 30_000;
/** How much slower the page's CPU runs during the fresh replay, so that it outlasts the overlay's delay. */
const CPU_SLOWDOWN = 6;
/** Page script: sets `window.overlaySeen` once the "Restoring…" overlay is in the page. */
const OVERLAY_WATCH = `
  window.overlaySeen = false;
  new MutationObserver(() => {
    if (document.querySelector(".term-overlay")?.textContent?.includes("Restoring…")) window.overlaySeen = true;
  }).observe(document, { subtree: true, childList: true, characterData: true });
`;
/** Control, position and status frames: what a resume with nothing missing costs. */
const FRAMING_MAX_BYTES = 4_096;

async function ringEnd(server: WebmuxServer, id: string): Promise<{ end: number; truncated: boolean }> {
  const response = await server.api(`/api/sessions/${id}/buffer`);
  await response.arrayBuffer();
  return { end: Number(response.headers.get("x-webmux-end")), truncated: response.headers.get("x-webmux-truncated") === "true" };
}

const positionsOf = (frames: ReturnType<typeof recordTerminalFrames>) =>
  frames.received.filter((f) => f.opcode === 0x04).map((f) => JSON.parse(f.payload.subarray(1).toString()) as { mode: string; start: number; end: number; truncated: boolean });

test("a full 4 MiB ring replays behind the overlay; a reload paints the IndexedDB copy and resumes with append", async ({ page, context, server }) => {
  test.setTimeout(120_000);
  const session = await createSession(server, {
    command: ["/usr/bin/bash", "--norc", "--noprofile", "-c", `base64 -w 99 /dev/urandom | head -c ${OUTPUT_BYTES}; echo; echo END-OF-OUTPUT; exec sleep 1000`],
  });
  await expect.poll(() => ringEnd(server, session.id).then((r) => r.end), { timeout: 20_000 }).toBeGreaterThan(OUTPUT_BYTES);
  const ring = await ringEnd(server, session.id);
  expect(ring.truncated).toBe(false);
  expect(ring.end).toBeGreaterThan(RING_BYTES - 64 * 1024);

  await logIn(context, server);
  // The overlay waits OVERLAY_DELAY_MS before it shows, and a fast machine can parse 4 MiB in about
  // that time: a slowed CPU makes the replay long for certain, and a MutationObserver notes the
  // overlay however briefly it is there (polling for it would race).
  await page.addInitScript({ content: OVERLAY_WATCH });
  const cdp = await context.newCDPSession(page);
  await cdp.send("Emulation.setCPUThrottlingRate", { rate: CPU_SLOWDOWN });
  const fresh = recordTerminalFrames(page);
  await page.goto(`${server.url}/s/${session.id}`);
  await waitForPhase(page, "live", SLOW_MS);
  await waitForText(page, /^END-OF-OUTPUT$/m, SLOW_MS);
  await expect(page.locator(".term-overlay")).toBeHidden({ timeout: SLOW_MS });
  await cdp.send("Emulation.setCPUThrottlingRate", { rate: 1 });
  expect(await page.evaluate("window.overlaySeen")).toBe(true);
  expect(positionsOf(fresh)).toEqual([{ generation: session.generation, mode: "reset", start: 0, end: ring.end, truncated: false }]);
  const snapshots = fresh.received.filter((f) => f.opcode === 0x01);
  expect(snapshots.map((f) => f.bytes - 1)).toEqual([ring.end]);
  const first = (await stats(page))!;
  expect(first.restoredLocally).toBe(false);
  expect(first.firstPaintMs).not.toBeNull();
  await expect.poll(() => stats(page).then((s) => s?.savedOffset), { timeout: SLOW_MS }).toBe(ring.end);
  const screen = (await terminalLines(page)).slice(-(first.rows));

  const reload = recordTerminalFrames(page);
  await page.reload();
  await waitForPhase(page, "live", SLOW_MS);
  await expect.poll(() => stats(page).then((s) => s?.firstPaintMs ?? null), { timeout: SLOW_MS }).not.toBeNull();
  const restored = (await stats(page))!;
  expect(restored.restoredLocally).toBe(true);
  expect(positionsOf(reload)).toEqual([{ generation: session.generation, mode: "append", start: ring.end, end: ring.end, truncated: false }]);
  expect(reload.received.filter((f) => f.opcode === 0x01 || f.opcode === 0x00)).toEqual([]);
  expect(reload.receivedBytes()).toBeLessThan(FRAMING_MAX_BYTES);
  expect((await terminalLines(page)).slice(-(restored.rows))).toEqual(screen);
});
