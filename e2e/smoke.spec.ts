import type { Page } from "@playwright/test";
import type { SessionListResponse } from "../server/contract/types.ts";
import { expect, test } from "./fixtures.ts";

const loginForm = (page: Page) => page.getByRole("form", { name: "Log in" });
const tokenField = (page: Page) => page.getByLabel("Access token");
const sessionsHeading = (page: Page) => page.getByRole("heading", { name: "Sessions" });
const sessionRows = (page: Page) => page.getByRole("list", { name: "Sessions" }).getByRole("listitem");

test("pasting the token logs in, and a new session shows up in the list", async ({ page, server }, testInfo) => {
  await page.goto(server.url + "/");
  await expect(loginForm(page)).toBeVisible();

  await tokenField(page).fill("not-the-token");
  await page.getByRole("button", { name: "Log in" }).click();
  await expect(page.getByRole("alert")).toContainText("not accepted");
  await expect(sessionsHeading(page)).toBeHidden();

  await tokenField(page).fill(server.token);
  await page.getByRole("button", { name: "Log in" }).click();
  await expect(sessionsHeading(page)).toBeVisible();
  await expect(page.getByText("No sessions yet")).toBeVisible();

  await page.getByRole("button", { name: "New session" }).click();
  await expect(sessionRows(page)).toHaveCount(1);

  // The row shows what the server says about the session it started.
  const listed = (await (await server.api("/api/sessions")).json()) as SessionListResponse;
  expect(listed.sessions).toHaveLength(1);
  const [session] = listed.sessions;
  const row = sessionRows(page).first();
  await expect(row).toContainText(session!.title);
  await expect(row).toContainText(session!.command.join(" "));
  await expect(row).toContainText("running");

  // The cookie keeps us logged in across a reload, and the list comes from the server.
  await page.reload();
  await expect(sessionRows(page)).toHaveCount(1);
  await page.screenshot({ path: testInfo.outputPath("sessions.png"), fullPage: true });
});

test("a login URL logs in directly and leaves a clean address", async ({ page, server }) => {
  const response = await page.goto(`${server.url}/?token=${server.token}`);
  // The server itself consumed the token (cookie, then a redirect to /).
  expect(response?.request().redirectedFrom()?.url()).toContain("token=");
  await expect(sessionsHeading(page)).toBeVisible();
  expect(page.url()).toBe(server.url + "/");
});

test("a 401 later on brings back Login, where the pasted login URL works", async ({ page, server, context }) => {
  await page.goto(`${server.url}/?token=${server.token}`);
  await expect(sessionsHeading(page)).toBeVisible();

  await context.clearCookies();
  await page.getByRole("button", { name: "New session" }).click();
  await expect(loginForm(page)).toBeVisible();
  expect(((await (await server.api("/api/sessions")).json()) as SessionListResponse).sessions).toHaveLength(0);

  await tokenField(page).fill(`${server.url}/?token=${server.token}`);
  await page.getByRole("button", { name: "Log in" }).click();
  await expect(sessionsHeading(page)).toBeVisible();
});
