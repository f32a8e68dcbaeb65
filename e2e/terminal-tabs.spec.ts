/** Several tabs on one session: one controls, the others watch at its grid; identity per tab. */
import { join } from "node:path";
import { expect, test } from "./fixtures.ts";
import { clientIdOf, createSession, logIn, openTerminal, PROMPT, stats, typeInTerminal, waitForPhase, waitForText, type PageGlobals } from "./terminal-helpers.ts";

test("a second tab watches live at the controller's grid and takes control by typing", async ({ context, server }) => {
  const session = await createSession(server);
  await logIn(context, server);
  const first = await context.newPage();
  await first.setViewportSize({ width: 1280, height: 800 });
  await openTerminal(first, server, session.id);
  await waitForText(first, PROMPT);
  const firstId = await clientIdOf(first);
  const wide = (await stats(first))!;
  expect(wide.controller).toBe(firstId);

  const second = await context.newPage();
  await second.setViewportSize({ width: 390, height: 844 });
  await openTerminal(second, server, session.id);
  const secondId = await clientIdOf(second);
  expect(secondId).not.toBe(firstId);
  // An observer shows the controller's grid, not its own box, and says who controls.
  await expect.poll(() => stats(second).then((s) => s && [s.cols, s.rows])).toEqual([wide.cols, wide.rows]);
  await expect(second.getByRole("status").filter({ hasText: "controls since" })).toContainText("Chrome on Linux");
  await expect(second.getByRole("button", { name: "Take control" })).toBeVisible();
  await expect(first.getByText("You control")).toBeVisible();

  await typeInTerminal(first, "echo from-first\n");
  await waitForText(second, /^from-first$/m);
  await second.screenshot({ path: join(import.meta.dirname, "..", "test-results", "screenshots", "terminal-phone-observer.png") });

  // Typing takes control: the second tab's terminal now fits its own (narrow) box, and the first follows it.
  await typeInTerminal(second, "echo from-second\n");
  await waitForText(first, /^from-second$/m);
  await expect.poll(() => stats(second).then((s) => s?.controller)).toBe(secondId);
  const narrow = (await stats(second))!;
  expect(narrow.cols).toBeLessThan(wide.cols);
  await expect.poll(() => stats(first).then((s) => s && [s.cols, s.rows])).toEqual([narrow.cols, narrow.rows]);
  const info = (await (await server.api(`/api/sessions/${session.id}`)).json()) as { cols: number; rows: number };
  expect([info.cols, info.rows]).toEqual([narrow.cols, narrow.rows]);

  // "Take control" hands it back without typing anything.
  await first.getByRole("button", { name: "Take control" }).click();
  await expect.poll(() => stats(first).then((s) => s && [s.controller, s.cols, s.rows])).toEqual([firstId, wide.cols, wide.rows]);
  await expect.poll(() => stats(second).then((s) => s && [s.cols, s.rows])).toEqual([wide.cols, wide.rows]);
});

test("a duplicated tab takes a new client ID while a reload keeps it", async ({ page, context, server }) => {
  const session = await createSession(server);
  await logIn(context, server);
  await openTerminal(page, server, session.id);
  const original = await clientIdOf(page);

  // window.open copies sessionStorage into the new tab, as "Duplicate tab" does.
  await page.evaluate(() => (globalThis as unknown as PageGlobals).sessionStorage.setItem("copied-probe", "yes"));
  const [duplicate] = await Promise.all([page.waitForEvent("popup"), page.evaluate(() => {
      const page = globalThis as unknown as PageGlobals;
      page.open(page.location.href);
    })]);
  await waitForPhase(duplicate, "live");
  expect(await duplicate.evaluate(() => (globalThis as unknown as PageGlobals).sessionStorage.getItem("copied-probe"))).toBe("yes");
  const copied = await clientIdOf(duplicate);
  expect(copied).not.toBe(original);
  // The copy attached as a client of its own: it watches, the original still controls.
  expect((await stats(duplicate))?.controller).toBe(original);

  await page.reload();
  await waitForPhase(page, "live");
  expect(await clientIdOf(page)).toBe(original);
  // Reattached under the same ID, it is still the controller.
  expect((await stats(page))?.controller).toBe(original);
});
