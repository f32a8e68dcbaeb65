/**
 * The compose box: drafts written offline survive a reload and reach the program once, in order;
 * the same draft seen by two tabs is written once; a draft for a generation that ended is shown
 * as failed and sent again only when the user asks.
 */
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "@playwright/test";
import { expect, test } from "./fixtures.ts";
import { createNodeSession, logIn, openTerminal, waitForPhase, waitForServiceWorker, waitForText } from "./terminal-helpers.ts";

/** A program that appends every byte it reads (raw mode: no echo, no line editing) to a file. */
const recorder = (file: string) => `
const fs = require("fs");
process.stdin.setRawMode(true);
process.stdin.on("data", (d) => fs.appendFileSync(${JSON.stringify(file)}, d));
process.stdout.write("recording\\r\\n");
setInterval(() => {}, 1 << 30);
`;

async function recordedInput(file: string): Promise<string> {
  return readFile(file, "utf8").catch(() => "");
}

async function compose(page: Page, text: string): Promise<void> {
  await page.getByLabel("Prompt").fill(text);
  await page.getByRole("button", { name: "Send" }).click();
}

const draft = (page: Page, body: string) => page.locator(".compose__draft", { hasText: body });

test("drafts written offline survive a reload and reach the program once, in order", async ({ page, server }) => {
  const file = join(await mkdtemp(join(tmpdir(), "webmux-compose-")), "input");
  const session = await createNodeSession(server, recorder(file));
  await logIn(page.context(), server);
  await openTerminal(page, server, session.id);
  await waitForText(page, "recording");
  await waitForServiceWorker(page);

  await page.context().setOffline(true);
  await waitForPhase(page, "waiting");
  await compose(page, "first prompt");
  await compose(page, "second prompt");
  await expect(draft(page, "first prompt")).toHaveAttribute("data-state", "queued");
  await expect(draft(page, "second prompt")).toHaveAttribute("data-state", "queued");

  await page.reload();
  await expect(draft(page, "first prompt")).toHaveAttribute("data-state", "queued");
  await expect(draft(page, "second prompt")).toHaveAttribute("data-state", "queued");
  expect(await recordedInput(file)).toBe("");

  await page.context().setOffline(false);
  await expect(draft(page, "first prompt")).toHaveAttribute("data-state", "written", { timeout: 15_000 });
  await expect(draft(page, "second prompt")).toHaveAttribute("data-state", "written");
  await expect.poll(() => recordedInput(file)).toBe("first prompt\rsecond prompt\r");

  // A later reconnect queries nothing into a resend: still exactly once.
  await page.reload();
  await waitForPhase(page, "live");
  await compose(page, "third prompt");
  await expect(draft(page, "third prompt")).toHaveAttribute("data-state", "written");
  expect(await recordedInput(file)).toBe("first prompt\rsecond prompt\rthird prompt\r");
});

test("the same draft seen by two tabs is written once", async ({ page, server }) => {
  const file = join(await mkdtemp(join(tmpdir(), "webmux-compose-")), "input");
  const session = await createNodeSession(server, recorder(file));
  await logIn(page.context(), server);
  await openTerminal(page, server, session.id);
  await waitForText(page, "recording");
  const other = await page.context().newPage();
  await openTerminal(other, server, session.id);

  await page.context().setOffline(true);
  await waitForPhase(page, "waiting");
  await waitForPhase(other, "waiting");
  await compose(page, "shared prompt");
  // The other tab lists it too (same IndexedDB): once online both tabs try to deliver it.
  await expect(draft(other, "shared prompt")).toHaveAttribute("data-state", "queued");

  await page.context().setOffline(false);
  await expect(draft(page, "shared prompt")).toHaveAttribute("data-state", "written", { timeout: 15_000 });
  await expect(draft(other, "shared prompt")).toHaveAttribute("data-state", "written");
  await waitForPhase(page, "live");
  await waitForPhase(other, "live");
  expect(await recordedInput(file)).toBe("shared prompt\r");
});

test("a draft for a generation that ended is failed and resent only on request", async ({ page, server }) => {
  const file = join(await mkdtemp(join(tmpdir(), "webmux-compose-")), "input");
  const session = await createNodeSession(server, recorder(file));
  await logIn(page.context(), server);
  await openTerminal(page, server, session.id);
  await waitForText(page, "recording");

  await page.context().setOffline(true);
  await waitForPhase(page, "waiting");
  await compose(page, "old generation prompt");
  const restarted = await server.api(`/api/sessions/${session.id}/restart`, { method: "POST" });
  expect(restarted.status).toBe(200);

  await page.context().setOffline(false);
  const old = draft(page, "old generation prompt").first();
  await expect(old).toHaveAttribute("data-state", "failed", { timeout: 15_000 });
  await expect(old).toHaveAttribute("data-error", "generation");
  await waitForPhase(page, "live");
  await waitForText(page, "recording");
  expect(await recordedInput(file)).toBe("");

  await old.getByRole("button", { name: "Resend" }).click();
  await expect(page.locator('.compose__draft[data-state="written"]', { hasText: "old generation prompt" })).toHaveCount(1);
  await expect(page.locator('.compose__draft[data-state="failed"]')).toHaveCount(0);
  await expect.poll(() => recordedInput(file)).toBe("old generation prompt\r");
});
