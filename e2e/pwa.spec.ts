/**
 * The installable app: Chromium finds nothing in the way of installing it, and once its service
 * worker is active the app opens offline with the last session list it saw.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext } from "@playwright/test";
import config from "./playwright.config.ts";
import { expect, test, type WebmuxServer } from "./fixtures.ts";
import { createSession, logIn, waitForServiceWorker } from "./terminal-helpers.ts";

// Playwright's own contexts count as incognito, where nothing installs: use a real profile.
test("Chromium reports no installability errors", async ({ server }) => {
  const profile = await mkdtemp(join(tmpdir(), "webmux-profile-"));
  const context = await chromium.launchPersistentContext(profile, { ...config.use?.launchOptions, headless: true });
  try {
    await installabilityOf(context, server);
  } finally {
    await context.close();
    await rm(profile, { recursive: true, force: true });
  }
});

async function installabilityOf(context: BrowserContext, server: WebmuxServer): Promise<void> {
  await logIn(context, server);
  const page = context.pages()[0] ?? (await context.newPage());
  await page.goto(server.url + "/");
  await waitForServiceWorker(page);
  const cdp = await context.newCDPSession(page);
  const { installabilityErrors } = (await cdp.send("Page.getInstallabilityErrors")) as {
    installabilityErrors: { errorId: string }[];
  };
  expect(installabilityErrors).toEqual([]);
  const manifest = (await cdp.send("Page.getAppManifest")) as { errors: unknown[]; url: string };
  expect(manifest.errors).toEqual([]);
  expect(manifest.url).toMatch(/manifest\.webmanifest$/);
}

test("a reload while offline renders the app shell with the cached session list", async ({ page, server }) => {
  const session = await createSession(server, { title: "offline-visible" });
  await logIn(page.context(), server);
  await page.goto(server.url + "/");
  await expect(page.getByText("offline-visible")).toBeVisible();
  await waitForServiceWorker(page);

  await page.context().setOffline(true);
  await page.reload();
  await expect(page.getByText("offline-visible")).toBeVisible();
  // The session's page opens offline too (its screen comes from IndexedDB once it was seen).
  await page.goto(`${server.url}/s/${session.id}`);
  await expect(page.getByLabel("Prompt")).toBeVisible();
});
