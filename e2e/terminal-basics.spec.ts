import { expect, test } from "./fixtures.ts";
import { createSession, logIn, openTerminal, PROMPT, stats, typeInTerminal, waitForText } from "./terminal-helpers.ts";

test("typing `echo hi` shows hi", async ({ page, context, server }) => {
  const session = await createSession(server);
  await logIn(context, server);
  await openTerminal(page, server, session.id);
  await waitForText(page, PROMPT);
  await typeInTerminal(page, "echo hi\n");
  await waitForText(page, /^hi$/m);
  const s = await stats(page);
  expect(s?.controller).toBe(s && (await page.evaluate(() => window.__webmux!.clientId)));
});
