/**
 * The list and the terminal on a phone and on a desktop, saved under test-results/screenshots/
 * for a person to look at. The assertions check what a screenshot cannot prove by eye: nothing
 * overflows the viewport sideways and the terminal fills its box.
 */
import { join } from "node:path";
import type { Page } from "@playwright/test";
import { expect, test } from "./fixtures.ts";
import { createSession, logIn, openTerminal, PROMPT, stats, typeInTerminal, waitForText, type PageGlobals } from "./terminal-helpers.ts";

const SCREENSHOTS = join(import.meta.dirname, "..", "test-results", "screenshots");

const VIEWPORTS = [
  { name: "phone", viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true },
  { name: "desktop", viewport: { width: 1280, height: 800 }, isMobile: false, hasTouch: false },
] as const;

async function expectNoSidewaysScroll(page: Page) {
  const overflow = await page.evaluate(() => {
    const root = (globalThis as unknown as PageGlobals).document.documentElement;
    return root.scrollWidth - root.clientWidth;
  });
  expect(overflow).toBeLessThanOrEqual(0);
}

for (const device of VIEWPORTS) {
  test.describe(device.name, () => {
    test.use({ viewport: device.viewport, isMobile: device.isMobile, hasTouch: device.hasTouch });

    test("list and terminal, dark and light", async ({ page, context, server }) => {
      await page.emulateMedia({ colorScheme: "dark" });
      await createSession(server, { title: "build server", command: ["/usr/bin/bash", "--norc", "--noprofile", "-c", "printf 'compiling 120 files\\nwarning: unused variable\\n'; exit 2"] });
      const shell = await createSession(server, { title: "agent" });
      await logIn(context, server);

      await openTerminal(page, server, shell.id);
      await waitForText(page, PROMPT);
      await typeInTerminal(page, "printf '\\e[1;32mok\\e[0m %s\\n' colours; ls -d /usr/*; printf '\\a'\n");
      await waitForText(page, /^ok colours$/m);
      await expectNoSidewaysScroll(page);
      // The controller's grid fills the box: resizing the page would change it.
      const { cols, rows } = (await stats(page))!;
      expect(cols).toBeGreaterThan(device.name === "phone" ? 40 : 120);
      expect(rows).toBeGreaterThan(device.name === "phone" ? 30 : 35);
      await page.screenshot({ path: join(SCREENSHOTS, `terminal-${device.name}-dark.png`) });
      await page.emulateMedia({ colorScheme: "light" });
      await expect(page.locator("html")).toHaveAttribute("data-theme", "light");
      await page.screenshot({ path: join(SCREENSHOTS, `terminal-${device.name}-light.png`) });

      await page.getByRole("link", { name: "Back to sessions" }).click();
      const listed = page.getByRole("list", { name: "Sessions" }).getByRole("listitem");
      await expect(listed).toHaveCount(2);
      await expect(listed.filter({ hasText: "agent" })).toContainText("attention");
      await expect(listed.filter({ hasText: "build server" })).toContainText("exited (2)");
      await expect(listed.filter({ hasText: "build server" })).toContainText("warning: unused variable");
      await expectNoSidewaysScroll(page);
      await page.screenshot({ path: join(SCREENSHOTS, `list-${device.name}-light.png`), fullPage: true });
      await page.emulateMedia({ colorScheme: "dark" });
      await expect(page.locator("html")).toHaveAttribute("data-theme", "dark");
      await page.screenshot({ path: join(SCREENSHOTS, `list-${device.name}-dark.png`), fullPage: true });

      if (device.name === "phone") {
        // The narrowest phones in use: still one line of header, nothing cut off.
        await page.setViewportSize({ width: 360, height: 740 });
        await expectNoSidewaysScroll(page);
        const button = await page.getByRole("button", { name: "New session" }).boundingBox();
        expect(button!.x + button!.width).toBeLessThanOrEqual(360);
        await page.screenshot({ path: join(SCREENSHOTS, "list-phone-360.png") });
      }
    });
  });
}
