/**
 * The key bar on a phone: its Ctrl-C interrupts a running program, and a sticky Ctrl turns the
 * next typed key into its control character.
 */
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test } from "./fixtures.ts";
import { createNodeSession, createSession, logIn, openTerminal, typeInTerminal, waitForText } from "./terminal-helpers.ts";

test.use({ viewport: { width: 360, height: 740 }, hasTouch: true, isMobile: true });

test("the key bar's Ctrl-C interrupts sleep 100", async ({ page, server }) => {
  const session = await createSession(server);
  await logIn(page.context(), server);
  await openTerminal(page, server, session.id);
  await expect(page.getByRole("toolbar", { name: "Keys" })).toBeVisible();
  await typeInTerminal(page, "echo started-$((40+2)); sleep 100\r");
  await waitForText(page, "started-42");
  await page.getByRole("button", { name: "Ctrl-C" }).click();
  // Typed ahead; bash runs it only once sleep is gone.
  await typeInTerminal(page, "echo after-$((1+1))\r");
  await waitForText(page, /^after-2$/m, 5_000);
});

test("a sticky Ctrl then d sends EOT", async ({ page, server }) => {
  const file = join(await mkdtemp(join(tmpdir(), "webmux-keys-")), "input");
  const session = await createNodeSession(
    server,
    `const fs = require("fs"); process.stdin.setRawMode(true);
     process.stdin.on("data", (d) => fs.appendFileSync(${JSON.stringify(file)}, d));
     process.stdout.write("recording\\r\\n"); setInterval(() => {}, 1 << 30);`,
  );
  await logIn(page.context(), server);
  await openTerminal(page, server, session.id);
  await waitForText(page, "recording");
  const ctrl = page.getByRole("button", { name: "Ctrl", exact: true });
  await ctrl.click();
  await expect(ctrl).toHaveAttribute("aria-pressed", "true");
  await typeInTerminal(page, "d");
  await expect(ctrl).toHaveAttribute("aria-pressed", "false");
  await typeInTerminal(page, "d");
  await expect.poll(() => readFile(file, "utf8").catch(() => "")).toBe("\x04d");
});
