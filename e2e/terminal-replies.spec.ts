/**
 * docs/design.md, Device queries and auto-replies: the browser answers no device query it finds in
 * replayed bytes — a reset's snapshot or an append resume's missing bytes — and tells the server
 * (0x07) once it has parsed each replay. What the program read is what the test asserts.
 */
import { fileURLToPath } from "node:url";
import type { BrowserContext, Page } from "@playwright/test";
import { expect, test, type WebmuxServer } from "./fixtures.ts";
import { createSession, logIn, openTerminal, recordTerminalFrames, terminalText, typeInTerminal, waitForPhase, waitForText } from "./terminal-helpers.ts";

/** Asks DSR, DA1/2/3, DECRQM, OSC 10/11, DECRQSS, … at start and on SIGUSR1; shows each read as `got:<hex>`. */
const RECORDER = fileURLToPath(new URL("../server/testing/tui/query-recorder.mjs", import.meta.url));
const hex = (s: string) => Buffer.from(s, "latin1").toString("hex");

async function ringText(server: WebmuxServer, id: string): Promise<string> {
  const response = await server.api(`/api/sessions/${id}/buffer`);
  return Buffer.from(await response.arrayBuffer()).toString("latin1");
}

/** What the program read, one hex string per read. */
async function programReads(page: Page): Promise<string[]> {
  return [...(await terminalText(page)).matchAll(/got:([0-9a-f]+)/g)].map((m) => m[1]!);
}

/**
 * A tab on a session whose ring holds the recorder's queries, asked before anyone attached, once
 * the tab has parsed that replay and said so (0x07).
 */
async function openAfterQueries(page: Page, context: BrowserContext, server: WebmuxServer) {
  const session = await createSession(server, { command: [process.execPath, RECORDER] });
  await expect.poll(() => ringText(server, session.id)).toContain("QUERIES-ASKED-1");
  await logIn(context, server);
  const frames = recordTerminalFrames(page);
  await openTerminal(page, server, session.id);
  await waitForText(page, "QUERIES-ASKED-1");
  // It says when it has parsed the replay; only then would the server take its 0x06.
  await expect.poll(() => frames.sent.filter((f) => f.opcode === 0x07).length).toBe(1);
  return { session, frames };
}

/** The program read nothing but the key typed now, and the tab sent no answer at all. */
async function expectOnlyTypedKey(page: Page, frames: ReturnType<typeof recordTerminalFrames>): Promise<void> {
  await typeInTerminal(page, "Z");
  await waitForText(page, `got:${hex("Z")}`);
  expect(await programReads(page)).toEqual([hex("Z")]);
  expect(frames.sent.filter((f) => f.opcode === 0x06)).toEqual([]);
}

test("a reset replay full of device queries gets none of them answered", async ({ page, context, server }) => {
  const { frames } = await openAfterQueries(page, context, server);
  await expectOnlyTypedKey(page, frames);
});

test("an append resume whose missing bytes hold device queries gets none of them answered", async ({ page, context, server }) => {
  const { session, frames } = await openAfterQueries(page, context, server);
  await context.setOffline(true);
  await waitForPhase(page, "waiting");
  // The program asks again while this tab is cut off: its questions are in the bytes it missed.
  process.kill(session.pid!, "SIGUSR1");
  await expect.poll(() => ringText(server, session.id)).toContain("QUERIES-ASKED-2");
  await context.setOffline(false);
  await waitForPhase(page, "live");
  await waitForText(page, "QUERIES-ASKED-2");
  const positions = frames.received.filter((f) => f.opcode === 0x04).map((f) => JSON.parse(f.payload.subarray(1).toString()));
  expect(positions.map((p) => p.mode)).toEqual(["reset", "append"]);
  await expect.poll(() => frames.sent.filter((f) => f.opcode === 0x07).length).toBe(2);
  await expectOnlyTypedKey(page, frames);
});

test("live device queries are still answered, once the replay is parsed", async ({ page, context, server }) => {
  const { session, frames } = await openAfterQueries(page, context, server);
  process.kill(session.pid!, "SIGUSR1");
  // xterm answers the live cursor-position report (among others): the program reads it.
  await expect.poll(async () => (await programReads(page)).join(" ")).toMatch(/1b5b\d+3b\d+52/);
  expect(frames.sent.filter((f) => f.opcode === 0x06).length).toBeGreaterThan(0);
});
