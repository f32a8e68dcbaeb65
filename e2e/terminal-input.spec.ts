/**
 * Input and auto-replies take different paths (0x00 takes control, 0x06 does not and only counts
 * from the controller), although the bytes can be the same: Shift+F3 and a cursor position report
 * are both ESC [ 1 ; 2 R. And the colour-scheme reports of mode 2031.
 */
import type { Page } from "@playwright/test";
import { expect, test } from "./fixtures.ts";
import { clientIdOf, createNodeSession, logIn, openTerminal, pressInTerminal, recordTerminalFrames, stats, terminalText, typeInTerminal, waitForText } from "./terminal-helpers.ts";

/** Echoes every input chunk as `got:<hex>`; `q` makes it ask for the cursor position, `s` for the colour scheme. */
const ECHO_PROGRAM = `
process.stdin.setRawMode(true);
process.stdout.write(process.argv[1] === "2031" ? "\\x1b[?2031hready\\r\\n" : "line one\\r\\nline two\\r\\nready\\r\\n");
process.stdin.on("data", (d) => {
  process.stdout.write("got:" + d.toString("hex") + "\\r\\n");
  if (d.toString() === "q") process.stdout.write("\\x1b[6n");
  if (d.toString() === "s") process.stdout.write("\\x1b[?996n");
  if (d.toString() === "x") process.exit(0);
});
`;

const hex = (s: string) => Buffer.from(s).toString("hex");
const SHIFT_F3 = "\x1b[1;2R";

/** Every `got:` line the program printed, in order. */
async function received(page: Page): Promise<string[]> {
  const text = await terminalText(page);
  return [...text.matchAll(/^got:([0-9a-f]+)$/gm)].map((m) => m[1]!);
}

test("Shift+F3 reaches the program as input; a cursor position report goes as an auto-reply", async ({ browser, server }) => {
  const session = await createNodeSession(server, ECHO_PROGRAM);
  const controllerContext = await browser.newContext();
  const observerContext = await browser.newContext();
  await logIn(controllerContext, server);
  await logIn(observerContext, server);
  const controller = await controllerContext.newPage();
  const observer = await observerContext.newPage();
  const observerFrames = recordTerminalFrames(observer);

  await openTerminal(controller, server, session.id);
  await waitForText(controller, /^ready$/m);
  await openTerminal(observer, server, session.id);
  const controllerId = await clientIdOf(controller);
  expect((await stats(observer))?.controller).toBe(controllerId);

  // The program asks where the cursor is: both terminals answer, only the controller's answer counts.
  await typeInTerminal(controller, "q");
  await expect.poll(() => received(controller)).toHaveLength(2);
  const [key, report] = await received(controller);
  expect(key).toBe(hex("q"));
  expect(Buffer.from(report!, "hex").toString()).toMatch(/^\x1b\[\d+;\d+R$/);
  expect(report).not.toBe(hex(SHIFT_F3));
  // The observer's own report went out as 0x06, which neither reached the program nor took control.
  await expect.poll(() => observerFrames.sent.filter((f) => f.opcode === 0x06 && /R$/.test(f.payload.toString()))).toHaveLength(1);
  expect((await stats(controller))?.controller).toBe(controllerId);

  // The same bytes from a key: input (0x00), delivered, and the observer now controls.
  await pressInTerminal(observer, "Shift+F3");
  await expect.poll(() => received(controller)).toEqual([hex("q"), report, hex(SHIFT_F3)]);
  const keyFrames = observerFrames.sent.filter((f) => f.opcode === 0x00);
  expect(keyFrames.map((f) => f.payload.subarray(1).toString())).toEqual([SHIFT_F3]);
  const observerId = await clientIdOf(observer);
  await expect.poll(() => stats(controller).then((s) => s?.controller)).toBe(observerId);

  await controllerContext.close();
  await observerContext.close();
});

test("with 2031 on, the colour scheme is reported on attach, on theme toggle and when asked", async ({ page, context, server }) => {
  await page.emulateMedia({ colorScheme: "dark" });
  const session = await createNodeSession(server, ECHO_PROGRAM.replace("process.argv[1]", '"2031"'));
  await expect.poll(async () => ((await (await server.api(`/api/sessions/${session.id}`)).json()) as { preview: string[] }).preview).toContain("ready");
  await logIn(context, server);
  await openTerminal(page, server, session.id);
  const DARK = hex("\x1b[?997;1n");
  const LIGHT = hex("\x1b[?997;2n");

  await expect.poll(() => received(page)).toEqual([DARK]);
  await page.getByRole("button", { name: "Toggle theme" }).click();
  await expect.poll(() => received(page)).toEqual([DARK, LIGHT]);
  await expect(page.locator("html")).toHaveAttribute("data-theme", "light");

  // CSI ? 996 n is answered with the current scheme.
  await typeInTerminal(page, "s");
  await expect.poll(() => received(page)).toEqual([DARK, LIGHT, hex("s"), LIGHT]);
  await page.getByRole("button", { name: "Toggle theme" }).click();
  await expect.poll(() => received(page)).toEqual([DARK, LIGHT, hex("s"), LIGHT, DARK]);
});

test("without 2031, a theme toggle sends nothing to the program", async ({ page, context, server }) => {
  const session = await createNodeSession(server, ECHO_PROGRAM);
  await logIn(context, server);
  await openTerminal(page, server, session.id);
  await waitForText(page, /^ready$/m);
  await page.getByRole("button", { name: "Toggle theme" }).click();
  // A key typed afterwards is the first thing the program receives.
  await typeInTerminal(page, "x");
  await waitForText(page, `got:${hex("x")}`);
  expect(await received(page)).toEqual([hex("x")]);
});

test("with 2031 on, a tab that takes control reports its own colour scheme; an observer's report is not delivered", async ({ browser, server }) => {
  const session = await createNodeSession(server, ECHO_PROGRAM.replace("process.argv[1]", '"2031"'));
  await expect.poll(async () => ((await (await server.api(`/api/sessions/${session.id}`)).json()) as { preview: string[] }).preview).toContain("ready");
  const darkContext = await browser.newContext({ colorScheme: "dark" });
  const lightContext = await browser.newContext({ colorScheme: "light" });
  await logIn(darkContext, server);
  await logIn(lightContext, server);
  const dark = await darkContext.newPage();
  const light = await lightContext.newPage();
  const DARK = hex("\x1b[?997;1n");
  const LIGHT = hex("\x1b[?997;2n");

  await openTerminal(dark, server, session.id);
  await expect.poll(() => received(dark)).toEqual([DARK]);
  // The observer reports on attach too (0x06), but only the controller's reports reach the program.
  const lightFrames = recordTerminalFrames(light);
  await openTerminal(light, server, session.id);
  await expect.poll(() => lightFrames.sent.filter((f) => f.opcode === 0x06).length).toBe(1);
  await light.getByRole("button", { name: "Take control" }).click();
  await expect.poll(() => stats(dark).then((s) => s?.controller)).toBe(await clientIdOf(light));
  // A key after it: everything the light tab sent before has reached the program by then.
  await typeInTerminal(light, "k");
  await waitForText(dark, `got:${hex("k")}`);
  expect(await received(dark)).toEqual([DARK, LIGHT, hex("k")]);

  await darkContext.close();
  await lightContext.close();
});
