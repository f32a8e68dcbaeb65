/** The session list: live from /ws/sessions, and create, rename, restart, delete from it. */
import type { Page } from "@playwright/test";
import type { SessionInfo } from "../server/contract/types.ts";
import { expect, test, type WebmuxServer } from "./fixtures.ts";
import { createSession, logIn, openTerminal, stats, waitForPhase } from "./terminal-helpers.ts";

const rows = (page: Page) => page.getByRole("list", { name: "Sessions" }).getByRole("listitem");
const row = (page: Page, id: string) => page.locator(`li[data-session-id="${id}"]`);

async function info(server: WebmuxServer, id: string): Promise<SessionInfo | null> {
  const response = await server.api(`/api/sessions/${id}`);
  return response.status === 404 ? null : ((await response.json()) as SessionInfo);
}

test("the list follows the server live: new sessions, exits, previews and who is attached", async ({ page, context, server }) => {
  await logIn(context, server);
  await page.goto(server.url + "/");
  await expect(page.getByText("No sessions yet")).toBeVisible();

  // Made elsewhere (the API), shown here without a reload.
  const quitter = await createSession(server, {
    title: "quitter",
    command: ["/usr/bin/bash", "--norc", "--noprofile", "-c", "echo about to go; read -r; exit 4"],
  });
  await expect(row(page, quitter.id)).toContainText("quitter");
  await expect(row(page, quitter.id)).toContainText("running");
  await expect(row(page, quitter.id)).toContainText("about to go");
  await expect(row(page, quitter.id)).toContainText("Nobody attached");

  // Another tab attaches and controls; then the program exits.
  const other = await context.newPage();
  await openTerminal(other, server, quitter.id);
  await expect(row(page, quitter.id)).toContainText("Chrome on Linux controls");
  // A second tab watches: the row counts it.
  const watcher = await context.newPage();
  await openTerminal(watcher, server, quitter.id);
  await expect(row(page, quitter.id)).toContainText("Chrome on Linux controls · 1 watching");
  await watcher.close();
  await expect(row(page, quitter.id)).not.toContainText("watching");
  await other.locator(".term-host .xterm-helper-textarea").focus();
  await other.keyboard.press("Enter");
  await expect(row(page, quitter.id)).toContainText("exited (4)");
  await other.close();
});

test("create with a command, rename, restart and delete (with confirmation)", async ({ page, context, server }) => {
  await logIn(context, server);
  await page.goto(server.url + "/");
  await page.getByRole("button", { name: "Start with a command" }).click();
  const form = page.getByRole("form", { name: "New session" });
  await form.getByLabel("Command").fill(`/usr/bin/bash --norc --noprofile -c "echo made-here; pwd; read -r"`);
  await form.getByLabel("Working directory").fill("/tmp");
  await form.getByRole("button", { name: "Start" }).click();
  await expect(form).toBeHidden();
  await expect(rows(page)).toHaveCount(1);
  const [created] = ((await (await server.api("/api/sessions")).json()) as { sessions: SessionInfo[] }).sessions;
  expect(created!.command).toEqual(["/usr/bin/bash", "--norc", "--noprofile", "-c", "echo made-here; pwd; read -r"]);
  const item = row(page, created!.id);
  await expect(item).toContainText("made-here");
  await expect(item).toContainText("/tmp");

  await item.getByRole("button", { name: "Rename" }).click();
  await item.getByLabel("New title").fill("my build");
  await item.getByRole("button", { name: "Save" }).click();
  await expect(item.locator(".session__title")).toHaveText("my build");
  expect((await info(server, created!.id))?.title).toBe("my build");

  await item.getByRole("button", { name: "Restart" }).click();
  await expect.poll(async () => (await info(server, created!.id))?.generation).not.toBe(created!.generation);

  await item.getByRole("button", { name: "Delete" }).click();
  const confirm = item.getByRole("group", { name: "Confirm delete" });
  await confirm.getByRole("button", { name: "Cancel" }).click();
  await expect(confirm).toBeHidden();
  expect(await info(server, created!.id)).not.toBeNull();
  await item.getByRole("button", { name: "Delete" }).click();
  await confirm.getByRole("button", { name: "Delete" }).click();
  await expect(rows(page)).toHaveCount(0);
  expect(await info(server, created!.id)).toBeNull();
});

test("a row opens its terminal, the back button returns to the list, history moves between terminals", async ({ page, context, server }) => {
  const first = await createSession(server, { title: "first" });
  const second = await createSession(server, { title: "second" });
  await logIn(context, server);
  await page.goto(server.url + "/");
  await row(page, first.id).getByRole("link").click();
  await expect(page).toHaveURL(`${server.url}/s/${first.id}`);
  await waitForPhase(page, "live");
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("first");
  await page.getByRole("link", { name: "Back to sessions" }).click();
  await expect(page).toHaveURL(`${server.url}/`);
  await row(page, second.id).getByRole("link").click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("second");
  await waitForPhase(page, "live");

  // Straight from one terminal to the other: the page is rebuilt for the other session.
  await page.evaluate(() => (globalThis as unknown as { history: { go(n: number): void } }).history.go(-2));
  await expect(page).toHaveURL(`${server.url}/s/${first.id}`);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("first");
  await expect.poll(() => stats(page).then((s) => s && [s.phase, s.generation])).toEqual(["live", first.generation]);
  await page.goBack();
  await expect(page).toHaveURL(`${server.url}/`);
  await expect(row(page, first.id)).toBeVisible();
});

test("the device label is editable and is what other tabs see", async ({ page, context, server }) => {
  const session = await createSession(server);
  await logIn(context, server);
  await page.goto(server.url + "/");
  await page.getByRole("button", { name: "Edit" }).click();
  await page.getByLabel("Device label").fill("Kitchen tablet");
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByRole("region", { name: "This device" })).toContainText("Kitchen tablet");

  const other = await context.newPage();
  await openTerminal(other, server, session.id);
  await expect.poll(async () => (await info(server, session.id))?.controller?.label).toBe("Kitchen tablet");
  await expect(row(page, session.id)).toContainText("Kitchen tablet controls");
});
