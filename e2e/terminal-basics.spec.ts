import { expect, test } from "./fixtures.ts";
import { clientIdOf, createSession, logIn, openTerminal, PROMPT, stats, typeInTerminal, waitForPhase, waitForText } from "./terminal-helpers.ts";

test("typing `echo hi` shows hi", async ({ page, context, server }) => {
  const session = await createSession(server);
  await logIn(context, server);
  await openTerminal(page, server, session.id);
  await waitForText(page, PROMPT);
  await typeInTerminal(page, "echo hi\n");
  await waitForText(page, /^hi$/m);
  const s = await stats(page);
  expect(s?.controller).toBe(s && (await clientIdOf(page)));
});

test("a terminal link opened while logged out shows Login, then the terminal", async ({ page, server }) => {
  const session = await createSession(server);
  await page.goto(`${server.url}/s/${session.id}`);
  await expect(page.getByRole("form", { name: "Log in" })).toBeVisible();
  await page.getByLabel("Access token").fill(server.token);
  await page.getByRole("button", { name: "Log in" }).click();
  await waitForPhase(page, "live");
  await waitForText(page, PROMPT);
  expect(page.url()).toBe(`${server.url}/s/${session.id}`);
});
