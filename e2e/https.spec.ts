/**
 * `webmux serve --tls-cert --tls-key`: the app over https://, its service worker (which needs a
 * secure origin — the reason for TLS at all), the Secure login cookie, and both WebSockets over wss://.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "@playwright/test";
import config from "./playwright.config.ts";
import { writeTestCertificate } from "../server/testing/test-certificate.ts";
import { expect, test } from "./fixtures.ts";
import { BASH, createSession, openTerminal, PROMPT, typeInTerminal, waitForText } from "./terminal-helpers.ts";

type ServiceWorkerGlobals = {
  navigator: { serviceWorker: { ready: Promise<{ active: { state: string } | null; scope: string }>; controller: unknown } };
};

test.use({
  // A fresh self-signed certificate per test; the fixture trusts it for its own requests.
  serverArgs: async ({}, use) => {
    const dir = await mkdtemp(join(tmpdir(), "webmux-e2e-tls-"));
    const certificate = await writeTestCertificate(dir);
    await use(["--tls-cert", certificate.certFile, "--tls-key", certificate.keyFile]);
    await rm(dir, { recursive: true, force: true });
  },
  ignoreHTTPSErrors: true,
  // ignoreHTTPSErrors lets pages load, but Chromium still refuses to register a service worker
  // from an origin whose certificate it does not trust ("An SSL certificate error occurred when
  // fetching the script"); --ignore-certificate-errors makes the self-made certificate count.
  launchOptions: {
    ...config.use?.launchOptions,
    args: [...(config.use?.launchOptions?.args ?? []), "--ignore-certificate-errors"],
  },
});

/** The URLs of every WebSocket the page opens. */
function recordWebSockets(page: Page): string[] {
  const urls: string[] = [];
  page.on("websocket", (ws) => urls.push(ws.url()));
  return urls;
}

test("the app loads over https://, its service worker activates, and the login cookie is Secure", async ({ page, context, server }) => {
  expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
  await page.goto(`${server.url}/?token=${encodeURIComponent(server.token)}`);
  await expect(page).toHaveURL(`${server.url}/`);
  await expect(page.getByText("No sessions yet")).toBeVisible();

  const cookie = (await context.cookies(server.url)).find((c) => c.name === "webmux_session");
  expect(cookie).toMatchObject({ secure: true, httpOnly: true, sameSite: "Strict" });

  // `ready` resolves once a worker is active, possibly still "activating": wait for "activated".
  const registration = () =>
    page.evaluate(async () => {
      const ready = await (globalThis as unknown as ServiceWorkerGlobals).navigator.serviceWorker.ready;
      return { scope: ready.scope, state: ready.active?.state ?? null };
    });
  await expect.poll(registration).toEqual({ scope: `${server.url}/`, state: "activated" });
  await expect
    .poll(() => page.evaluate(() => (globalThis as unknown as ServiceWorkerGlobals).navigator.serviceWorker.controller !== null))
    .toBe(true);
});

test("the session list is live and a terminal works over wss://", async ({ page, server }) => {
  const sockets = recordWebSockets(page);
  await page.goto(`${server.url}/?token=${encodeURIComponent(server.token)}`);
  await expect(page.getByText("No sessions yet")).toBeVisible();

  // Made through the API: the list shows it without a reload, so /ws/sessions is live.
  const session = await createSession(server, { title: "over-tls", command: BASH, env: { PS1: PROMPT, TERM: "xterm-256color" } });
  await expect(page.locator(`li[data-session-id="${session.id}"]`)).toContainText("over-tls");
  expect(sockets.some((url) => url.startsWith("wss://") && url.includes("/ws/sessions"))).toBe(true);

  await openTerminal(page, server, session.id);
  await typeInTerminal(page, "echo hi-$((40+2))\r");
  await waitForText(page, /^hi-42$/m);
  expect(sockets.some((url) => url.startsWith(`${server.url.replace(/^https/, "wss")}/ws/s/${session.id}`))).toBe(true);
  expect(sockets.filter((url) => !url.startsWith("wss://"))).toEqual([]);
});
