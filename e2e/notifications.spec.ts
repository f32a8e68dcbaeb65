/**
 * Notifications: a session that rings its bell while the app is hidden shows a notification
 * (tagged with the session, so bells replace each other) and sets the app badge, from whichever
 * page the user is on; tapping it opens the session; the permission is asked only from the
 * Settings button.
 *
 * Hidden pages: headless Chromium reports every page as visible, whatever is in front (a second
 * page brought to front, a minimised window and a background tab all leave `visibilityState`
 * "visible"). So an init script makes `document.visibilityState` / `document.hidden` answer what
 * the test says and fires `visibilitychange`, as a browser does when the app goes to the
 * background; the app reads exactly these when a bell comes in. The badge calls are recorded by
 * wrapping `navigator.setAppBadge` / `clearAppBadge` (outside an installed app they do nothing
 * visible).
 */
import type { BrowserContext, Page } from "@playwright/test";
import { TerminalClient } from "../server/testing/terminal-client.ts";
import { expect, test, type WebmuxServer } from "./fixtures.ts";
import { createSession, logIn, openTerminal, typeInTerminal, waitForPhase, waitForServiceWorker } from "./terminal-helpers.ts";

/** What the init script adds to the page, and what the specs read there (no DOM library here). */
type TestGlobals = {
  __e2e: { badges: number[]; permissionRequests: number; notificationsShown: number; setHidden(hidden: boolean): void };
  navigator: {
    serviceWorker: {
      ready: Promise<unknown>;
      controller: unknown;
      getRegistration(): Promise<{ getNotifications(filter?: { tag: string }): Promise<ShownNotification[]> } | undefined>;
    };
  };
  location: { pathname: string };
};
type ShownNotification = { title: string; body: string; tag: string; data: unknown };
type WorkerGlobals = {
  registration: { getNotifications(filter: { tag: string }): Promise<{ data: unknown }[]> };
  webmuxSessionPath(data: unknown): string;
  webmuxOpenSession(path: string): Promise<string>;
};

/** The browser globals the init script replaces, typed here (the e2e type check has no DOM library). */
type InitGlobals = {
  document: object & { dispatchEvent(event: unknown): boolean };
  Event: new (type: string) => unknown;
  navigator: Record<string, unknown>;
  ServiceWorkerRegistration?: { prototype: { showNotification(...args: unknown[]): Promise<void> } };
  Notification?: { requestPermission(...args: unknown[]): Promise<string> };
  __e2e: TestGlobals["__e2e"];
};

async function instrument(context: BrowserContext): Promise<void> {
  await context.addInitScript(() => {
    const g = globalThis as unknown as InitGlobals;
    let hidden = false;
    Object.defineProperty(g.document, "visibilityState", { configurable: true, get: () => (hidden ? "hidden" : "visible") });
    Object.defineProperty(g.document, "hidden", { configurable: true, get: () => hidden });
    const e2e: InitGlobals["__e2e"] = {
      badges: [],
      permissionRequests: 0,
      notificationsShown: 0,
      setHidden(next) {
        hidden = next;
        g.document.dispatchEvent(new g.Event("visibilitychange"));
      },
    };
    g.__e2e = e2e;
    g.navigator.setAppBadge = (count?: number) => (e2e.badges.push(count ?? 1), Promise.resolve());
    g.navigator.clearAppBadge = () => (e2e.badges.push(0), Promise.resolve());
    const registration = g.ServiceWorkerRegistration?.prototype;
    if (registration) {
      const show = registration.showNotification;
      registration.showNotification = function (this: unknown, ...args: unknown[]) {
        e2e.notificationsShown++;
        return show.apply(this, args);
      };
    }
    const notification = g.Notification;
    if (notification) {
      const request = notification.requestPermission.bind(notification);
      notification.requestPermission = (...args: unknown[]) => {
        e2e.permissionRequests++;
        return request(...args);
      };
    }
  });
}

function notificationsOf(page: Page, tag: string): Promise<ShownNotification[]> {
  return page.evaluate(async (tag) => {
    const registration = await (globalThis as unknown as TestGlobals).navigator.serviceWorker.getRegistration();
    const shown = (await registration?.getNotifications({ tag })) ?? [];
    return shown.map((n) => ({ title: n.title, body: n.body, tag: n.tag, data: n.data }));
  }, tag);
}

const e2e = (page: Page) => page.evaluate(() => {
  const { badges, permissionRequests, notificationsShown } = (globalThis as unknown as TestGlobals).__e2e;
  return { badges, permissionRequests, notificationsShown };
});
const badges = (page: Page) => page.evaluate(() => (globalThis as unknown as TestGlobals).__e2e.badges);
const setHidden = (page: Page, hidden: boolean) => page.evaluate((h) => (globalThis as unknown as TestGlobals).__e2e.setHidden(h), hidden);

/** Another client types into the session: typing answers its bell (attention off), `printf` rings it. */
async function typeFromElsewhere(server: WebmuxServer, sessionId: string, command: string, done: string): Promise<void> {
  const client = await TerminalClient.connect(server.url, sessionId, { token: server.token, client: "e2e-ringer" });
  try {
    await client.waitForText("$ ");
    client.type(command + "\r");
    await client.waitForText(done);
  } finally {
    await client.close();
  }
}
// The arithmetic keeps the awaited text out of the command's echo.
const ring = (server: WebmuxServer, id: string) => typeFromElsewhere(server, id, "printf 'rang-%s\\a\\n' $((6*7))", "rang-42");

/** The app has its first session list (the watcher's baseline: it clears the badge). */
async function waitForList(page: Page): Promise<void> {
  await expect.poll(() => badges(page)).toEqual([0]);
}

test("a bell while the app is hidden notifies, badges, and the tap opens the session", async ({ page, context, server }) => {
  await context.grantPermissions(["notifications"], { origin: server.url });
  await instrument(context);
  const ringer = await createSession(server, { title: "build" });
  const other = await createSession(server, { title: "other" });
  await logIn(context, server);
  // The user is on another session's terminal, not the list: the watcher runs everywhere.
  await openTerminal(page, server, other.id);
  await waitForServiceWorker(page);
  await waitForList(page);
  await setHidden(page, true);

  await ring(server, ringer.id);
  await expect.poll(() => notificationsOf(page, ringer.id).then((list) => list.length)).toBe(1);
  const [shown] = await notificationsOf(page, ringer.id);
  expect(shown!.title).toBe("build");
  expect(shown!.body).toMatch(/^Needs attention/);
  expect(shown!.data).toEqual({ sessionId: ringer.id, url: `/s/${ringer.id}` });
  await expect.poll(() => badges(page).then((list) => list.at(-1))).toBe(1);

  // The tap brings the app to the front. The tap: the worker's own handler code, from the shown notification's data. (A notification
  // cannot be clicked from a script; the handler around it is unit-tested in notification-sw.test.ts.)
  const worker = context.serviceWorkers()[0] ?? (await context.waitForEvent("serviceworker"));
  const outcome = await worker.evaluate(async (tag) => {
    const scope = globalThis as unknown as WorkerGlobals;
    const [notification] = await scope.registration.getNotifications({ tag });
    return scope.webmuxOpenSession(scope.webmuxSessionPath(notification!.data));
  }, ringer.id);
  expect(outcome).toBe("told");
  await expect(page).toHaveURL(`${server.url}/s/${ringer.id}`);
  await waitForPhase(page, "live");
  expect(await page.evaluate(() => (globalThis as unknown as { __webmux: { terminal: { sessionId: string } } }).__webmux.terminal.sessionId)).toBe(ringer.id);

  // Typing in it answers the bell: attention goes off, the badge clears, the notification goes.
  await typeInTerminal(page, "\r");
  await expect.poll(() => badges(page).then((list) => list.at(-1))).toBe(0);
  await expect.poll(() => notificationsOf(page, ringer.id).then((list) => list.length)).toBe(0);
});

test("two hidden tabs hear one bell: one notification, tagged with the session", async ({ page, context, server }) => {
  await context.grantPermissions(["notifications"], { origin: server.url });
  await instrument(context);
  const ringer = await createSession(server, { title: "build" });
  await logIn(context, server);
  const second = await context.newPage();
  for (const tab of [page, second]) {
    await tab.goto(server.url + "/");
    await expect(tab.getByText("build")).toBeVisible();
    await waitForServiceWorker(tab);
    await waitForList(tab);
    await setHidden(tab, true);
  }

  await ring(server, ringer.id);
  // Both tabs showed it; the shared tag left one notification.
  await expect.poll(async () => (await e2e(page)).notificationsShown + (await e2e(second)).notificationsShown).toBe(2);
  expect(await notificationsOf(page, ringer.id)).toHaveLength(1);

  // Answered elsewhere, then rung again: withdrawn, then shown afresh; still never two.
  await typeFromElsewhere(server, ringer.id, "echo answered-$((6*7))", "answered-42");
  await expect.poll(() => notificationsOf(page, ringer.id).then((list) => list.length)).toBe(0);
  await ring(server, ringer.id);
  await expect.poll(async () => (await e2e(page)).notificationsShown + (await e2e(second)).notificationsShown).toBe(4);
  expect(await notificationsOf(second, ringer.id)).toHaveLength(1);
});

test("a visible app shows no notification; the permission is asked only from the Settings button", async ({ page, context, server }) => {
  await instrument(context);
  const ringer = await createSession(server, { title: "build" });
  await logIn(context, server);
  await page.goto(server.url + "/");
  await expect(page.getByText("build")).toBeVisible();
  await openTerminal(page, server, ringer.id);
  expect((await e2e(page)).permissionRequests).toBe(0);

  await page.goto(server.url + "/settings");
  const card = page.getByRole("region", { name: "Notifications" });
  await expect(card).toContainText("Notifications: off");
  await card.getByRole("button", { name: "Turn on notifications" }).click();
  await expect.poll(() => e2e(page).then((state) => state.permissionRequests)).toBe(1);

  await context.grantPermissions(["notifications"], { origin: server.url });
  await page.reload();
  await expect(card).toContainText("Notifications: on");
  await expect(card.getByRole("button", { name: "Turn on notifications" })).toHaveCount(0);
  await waitForServiceWorker(page);
  await waitForList(page);

  // Visible: the bell reaches the app (the badge counts it) but no notification is shown.
  await ring(server, ringer.id);
  await expect.poll(() => badges(page).then((list) => list.at(-1))).toBe(1);
  expect(await notificationsOf(page, ringer.id)).toEqual([]);
  expect(await e2e(page)).toMatchObject({ notificationsShown: 0, permissionRequests: 0 });
});
