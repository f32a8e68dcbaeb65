/** "Copy all" puts the retained output on the clipboard as the screen showed it, as plain text. */
import type { Page } from "@playwright/test";
import { expect, test } from "./fixtures.ts";
import { createSession, logIn, openTerminal, PROMPT, typeInTerminal, waitForText, type PageGlobals } from "./terminal-helpers.ts";

async function copyAll(page: Page): Promise<string> {
  await page.getByRole("button", { name: "Copy all" }).click();
  await expect(page.getByRole("status")).toContainText("Copied");
  return page.evaluate(() => (globalThis as unknown as PageGlobals).navigator.clipboard.readText());
}

test.beforeEach(async ({ context }) => {
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
});

test("copy all gives plain text: colours stripped, overwritten progress resolved", async ({ page, context, server }) => {
  const session = await createSession(server);
  await logIn(context, server);
  await openTerminal(page, server, session.id);
  await waitForText(page, PROMPT);
  await typeInTerminal(page, "printf 'progress 10%%\\rprogress 100%%\\n\\e[31mred\\e[0m plain\\n'\n");
  await waitForText(page, /^red plain$/m);

  const text = await copyAll(page);
  expect(text).not.toContain("\x1b");
  const lines = text.split("\n");
  expect(lines).toContain("progress 100%");
  expect(lines).toContain("red plain");
  expect(lines).not.toContain("progress 10%");
  expect(lines[0]).not.toContain("truncated");
});

test.describe("with a small ring", () => {
  test.use({ serverArgs: ["--buffer-bytes", String(64 * 1024)] });

  test("copied text starts with the truncation marker once history was dropped", async ({ page, context, server }) => {
    const session = await createSession(server);
    await logIn(context, server);
    await openTerminal(page, server, session.id);
    await waitForText(page, PROMPT);
    await typeInTerminal(page, "seq 1 20000\n");
    await waitForText(page, /^20000$/m);

    const lines = (await copyAll(page)).split("\n");
    expect(lines[0]).toBe("··· earlier output truncated ···");
    expect(lines).toContain("20000");
    expect(lines).not.toContain("1");
    // What the ring still holds is there, in order, each line once (the first may be a line's tail).
    const numbers = lines.filter((l) => /^\d+$/.test(l)).map(Number).slice(1);
    expect(numbers.length).toBeGreaterThan(5000);
    expect(numbers.at(-1)).toBe(20000);
    expect(numbers.every((n, i) => i === 0 || n === numbers[i - 1]! + 1)).toBe(true);
  });
});
