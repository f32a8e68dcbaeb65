/**
 * Local resume across reloads: the IndexedDB copy paints the screen and the stream resumes with
 * `append`, so a reload moves only the bytes printed since the copy; a ring truncated while the tab
 * was away falls back on a reset with the server's current screen; a TUI looks the same after it.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "@playwright/test";
import { expect, test, type WebmuxServer } from "./fixtures.ts";
import { BASH, createSession, logIn, openTerminal, PROMPT, recordTerminalFrames, selectionOf, stats, terminalLines, typeInTerminal, waitForPhase, waitForTerminal, waitForText } from "./terminal-helpers.ts";

/** Backstop for the 5 MB test: it ran past 30 s beside other test runs on two cores. */
const BIG_OUTPUT_TEST_TIMEOUT_MS = 120_000;

let dir: string;
test.beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "webmux-resume-"));
});
test.afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** bash -c that runs `before`, waits for the file `go` to exist, runs `after`, then idles. */
function waitingScript(before: string, after: string): string[] {
  return ["/usr/bin/bash", "--norc", "--noprofile", "-c", `${before}; until [ -e ${join(dir, "go")} ]; do sleep 0.05; done; ${after}; exec sleep 1000`];
}

async function ringEnd(server: WebmuxServer, id: string): Promise<number> {
  const response = await server.api(`/api/sessions/${id}/buffer`);
  await response.arrayBuffer();
  return Number(response.headers.get("x-webmux-end"));
}

/** Waits until the IndexedDB copy holds everything received so far (as long as rendering and saving advance). */
async function waitForSavedCopy(page: Page): Promise<number> {
  await waitForTerminal(page, ({ stats: s }) => s !== null && s.savedOffset === s.offset && s.renderedOffset === s.offset, "the saved copy catches up");
  return (await stats(page))!.savedOffset!;
}

const positionsOf = (frames: ReturnType<typeof recordTerminalFrames>) =>
  frames.received.filter((f) => f.opcode === 0x04).map((f) => JSON.parse(f.payload.subarray(1).toString()) as { mode: string; start: number; end: number; truncated: boolean });

test("a reload after 5 MB of output transfers only the bytes printed since the saved copy", async ({ page, context, server }) => {
  // Printing, rendering and saving 5 MB is a long job beside other work on a busy machine; the
  // terminal waits fail as soon as it stops moving, so the test's own deadline is only a backstop.
  test.setTimeout(BIG_OUTPUT_TEST_TIMEOUT_MS);
  const session = await createSession(server, { command: waitingScript("seq 1 800000", "echo after-reload") });
  await logIn(context, server);
  await openTerminal(page, server, session.id);
  await waitForText(page, /^800000$/m);
  const saved = await waitForSavedCopy(page);
  expect(saved).toBeGreaterThan(5_000_000);

  // Away from the page, the program prints a little more.
  await page.goto("about:blank");
  await writeFile(join(dir, "go"), "");
  await expect.poll(() => ringEnd(server, session.id)).toBeGreaterThan(saved);
  const end = await ringEnd(server, session.id);

  const frames = recordTerminalFrames(page);
  await openTerminal(page, server, session.id);
  await waitForText(page, /^after-reload$/m);
  expect((await stats(page))?.restoredLocally).toBe(true);
  expect(positionsOf(frames)).toEqual([{ generation: session.generation, mode: "append", start: saved, end, truncated: true }]);
  const output = frames.received.filter((f) => f.opcode === 0x00).reduce((sum, f) => sum + f.bytes - 1, 0);
  expect(output).toBe(end - saved);
  // Control, position, those bytes and the status frame: a couple of kilobytes, not megabytes.
  expect(frames.receivedBytes()).toBeLessThan(4_096);
  const lines = await terminalLines(page);
  expect(lines).toContain("799999");
  // The local copy keeps recent history only, and says so where it starts.
  expect(lines.find((line) => line !== "")).toBe("··· earlier output truncated ···");
});

test.describe("with a small ring", () => {
  test.use({ serverArgs: ["--buffer-bytes", String(64 * 1024)] });

  test("a ring truncated while the tab was away shows the current screen after a reset", async ({ page, context, server }) => {
    const session = await createSession(server, { command: waitingScript("echo before-away", "seq 1 20000; printf '\\ncurrent screen\\n'") });
    await logIn(context, server);
    await openTerminal(page, server, session.id);
    await waitForText(page, /^before-away$/m);
    const saved = await waitForSavedCopy(page);

    await page.goto("about:blank");
    await writeFile(join(dir, "go"), "");
    await expect.poll(() => ringEnd(server, session.id)).toBeGreaterThan(saved + 64 * 1024);
    // The preview comes from the headless mirror, which yields to everything else on a busy machine (nice 10).
    await expect.poll(async () => ((await (await server.api(`/api/sessions/${session.id}`)).json()) as { preview: string[] }).preview, { timeout: 30_000 }).toContain("current screen");

    const frames = recordTerminalFrames(page);
    await openTerminal(page, server, session.id);
    await waitForText(page, /^current screen$/m);
    expect(positionsOf(frames).map((p) => [p.mode, p.truncated])).toEqual([["reset", true]]);
    const lines = await terminalLines(page);
    const shown = lines.filter((line) => line !== "");
    // The local copy was cleared; the marker, then the server's screen and history.
    expect(lines).not.toContain("before-away");
    expect(shown[0]).toBe("··· earlier output truncated ···");
    expect(shown.slice(-2)).toEqual(["20000", "current screen"]);
    // Nothing pops up about the dropped history or the redraw request; the marker is all there is.
    await expect(page.getByRole("dialog")).toHaveCount(0);
    await expect(page.getByRole("alert")).toHaveCount(0);
    await expect(page.locator(".term-status")).not.toContainText(/truncat|redraw|history/i);
    // Find reaches the marker too.
    await page.getByRole("button", { name: "Find" }).click();
    await page.getByRole("searchbox", { name: "Find in terminal" }).fill("earlier output truncated");
    await page.getByRole("searchbox", { name: "Find in terminal" }).press("Enter");
    await expect.poll(() => selectionOf(page)).toBe("earlier output truncated");
    await expect(page.getByText("No match")).toBeHidden();
  });
});

test("vim looks the same after a reload (local copy) and in a fresh tab (server replay), and keeps working", async ({ page, context, browser, server }) => {
  const lines = ["alpha", "beta", "gamma", ...Array.from({ length: 100 }, (_, i) => `row ${i + 1}`)];
  await writeFile(join(dir, "notes.txt"), lines.join("\n") + "\n");
  const session = await createSession(server, { command: BASH, cwd: dir });
  await logIn(context, server);
  await openTerminal(page, server, session.id);
  await waitForText(page, PROMPT);
  await typeInTerminal(page, "vim -u NONE -N -i NONE notes.txt\n");
  await waitForText(page, /"notes\.txt" 103L/);
  // Jump to the end: vim scrolls, using its scroll region.
  await typeInTerminal(page, "G");
  await waitForText(page, /^row 100\s*$/m);
  await waitForSavedCopy(page);
  const before = await terminalLines(page);
  expect(before[0]).not.toBe("alpha");

  await page.reload();
  await waitForPhase(page, "live");
  expect((await stats(page))?.restoredLocally).toBe(true);
  expect(await terminalLines(page)).toEqual(before);

  const fresh = await browser.newContext();
  await logIn(fresh, server);
  const other = await fresh.newPage();
  await openTerminal(other, server, session.id);
  await expect.poll(() => terminalLines(other)).toEqual(before);
  await fresh.close();

  // Still vim, still in control: back to the top, then quit to the shell.
  await typeInTerminal(page, "gg");
  await expect.poll(() => terminalLines(page).then((l) => l[0])).toBe("alpha");
  await typeInTerminal(page, ":q!\n");
  await waitForText(page, /vim -u NONE -N -i NONE notes\.txt/);
  await expect.poll(() => terminalLines(page).then((l) => l.filter((x) => x !== "").at(-1))).toBe(PROMPT);
});
