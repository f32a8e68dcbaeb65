import { expect, test } from "./fixtures.ts";
import { clientIdOf, createNodeSession, createSession, logIn, openTerminal, PROMPT, stats, typeInTerminal, waitForPhase, waitForText } from "./terminal-helpers.ts";

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

/** On a key: prints an emoji at the start of a line and asks where the cursor went; prints the cursor position report it gets back. */
const WIDTH_PROBE = `
process.stdin.setRawMode(true);
process.stdout.write("press g\\r\\n");
process.stdin.once("data", () => {
  process.stdout.write("\\u{1F44D}\\x1b[6n");
  process.stdin.once("data", (d) => process.stdout.write("\\r\\ncpr " + d.toString().replace("\\x1b", "ESC") + "\\r\\n"));
});
setInterval(() => {}, 1 << 30);
`;

test("wide characters take Unicode 11 widths: an emoji is two cells", async ({ page, context, server }) => {
  const session = await createNodeSession(server, WIDTH_PROBE);
  await logIn(context, server);
  await openTerminal(page, server, session.id);
  await waitForText(page, "press g");
  await typeInTerminal(page, "g");
  // Unicode 6 (xterm's default) counts U+1F44D as one cell and would report column 2.
  await waitForText(page, /^cpr ESC\[2;3R$/m);
});

test("a URL the program prints is a link that opens in a new tab", async ({ page, context, server }) => {
  const target = `${server.url}/?from=terminal-link`;
  const session = await createSession(server, { command: ["/usr/bin/bash", "--norc", "--noprofile", "-c", `printf '%s\\n' '${target}'; exec sleep 1000`] });
  await logIn(context, server);
  await openTerminal(page, server, session.id);
  await waitForText(page, target);
  // The pointer goes where the row is drawn (xterm's screen layer takes the events).
  const box = (await page.locator(".xterm-rows > div", { hasText: target }).boundingBox())!;
  const [x, y] = [box.x + 20, box.y + box.height / 2];
  await page.mouse.move(x, y);
  // The link provider found it under the pointer.
  await expect(page.locator(".xterm-screen")).toHaveClass(/xterm-cursor-pointer/);
  const [opened] = await Promise.all([context.waitForEvent("page"), page.mouse.click(x, y)]);
  await expect.poll(() => opened.url()).toBe(target);
});
