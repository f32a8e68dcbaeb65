/**
 * The IndexedDB copy of a screen carries the whole terminal state (docs/design.md § Snapshots: the
 * browser writes it with the server's snapshot writer). A program leaves state that only its next
 * output shows — DEC line drawing still designated, a scroll region under a status bar, a saved
 * cursor with its pen, its own tab stops — the page reloads offline and paints its copy, then the
 * stream resumes and the program prints more: at each step the reloaded page equals, cell by cell,
 * a page that stayed connected all along.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "@playwright/test";
import { stateDifferences } from "../server/vt/screen-cells.ts";
import { expect, test, type WebmuxServer } from "./fixtures.ts";
import {
  createNodeSession,
  logIn,
  openTerminal,
  recordTerminalFrames,
  stats,
  terminalCells,
  terminalLines,
  waitForServiceWorker,
  waitForTerminal,
  waitForText,
} from "./terminal-helpers.ts";

let dir: string;
test.beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "webmux-stored-copy-"));
});
test.afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/**
 * The start of this file's programs (Node, raw mode): `out` prints, `when(name, then)` runs `then`
 * once the file `name` exists in `directory`, and READY says the program runs.
 */
function stepsIn(directory: string): string {
  return `
const fs = require("fs");
const path = require("path");
const out = (s) => process.stdout.write(s);
const when = (name, then) => {
  const timer = setInterval(() => {
    if (!fs.existsSync(path.join(${JSON.stringify(directory)}, name))) return;
    clearInterval(timer);
    then();
  }, 50);
};
process.stdin.setRawMode(true);
out("READY\\r\\n");
`;
}

/**
 * A full-screen program at the terminal's size: once the file `draw` exists it draws a status bar
 * on the last row below a scroll region, sets tab stops at columns 5 and 17 only, saves the cursor
 * at row 2, column 30 with a green pen, and draws a box in DEC line drawing, which it leaves
 * designated. Once `more` exists it prints twice a screen of lines inside the region (`tqqqqu` is
 * `├────┤` in line drawing), goes back to the saved cursor for SAVED, and redraws the status bar
 * with tabs. Upper-case letters are the same in both charsets.
 */
function program(directory: string): string {
  return `${stepsIn(directory)}when("draw", () => {
  const rows = process.stdout.rows;
  let s = "\\x1b[2J\\x1b[H";
  s += "\\x1b[" + rows + ";1H\\x1b[7;33m STATUS DRAWN \\x1b[0m";
  s += "\\x1b[1;" + (rows - 1) + "r";
  s += "\\x1b[3g\\x1b[1;5H\\x1bH\\x1b[1;17H\\x1bH";
  s += "\\x1b[2;30H\\x1b[32m\\x1b7\\x1b[0m";
  s += "\\x1b[4;1H\\x1b(0lqqqqk\\r\\nx\\tx\\tx\\r\\nmqqqqj\\r\\nDRAWN";
  out(s);
  when("more", () => {
    let s = "\\r\\n";
    for (let i = 1; i <= 2 * rows; i++) s += "tqqqqu ROW " + i + "\\r\\n";
    s += "\\x1b8SAVED";
    s += "\\x1b[" + rows + ";1H\\x1b[2K\\x1b[7;33m\\tSTATUS\\tMORE\\x1b[0m";
    s += "\\x1b[" + (rows - 1) + ";1HFINISHED";
    out(s);
  });
});
setInterval(() => {}, 1 << 30);
`;
}

async function ringEnd(server: WebmuxServer, id: string): Promise<number> {
  const response = await server.api(`/api/sessions/${id}/buffer`);
  await response.arrayBuffer();
  return Number(response.headers.get("x-webmux-end"));
}

/** Waits until `page` has parsed the whole ring (as long as it makes progress). */
async function waitForRendered(page: Page, end: number): Promise<void> {
  await waitForTerminal(page, ({ stats: s }) => s !== null && s.renderedOffset === end, `the terminal renders up to ${end}`);
}

/** The two pages show the same thing, cell by cell; the failure names the first rows that differ. */
async function expectSameCells(stayed: Page, reloaded: Page, when: string): Promise<void> {
  expect(stateDifferences(await terminalCells(stayed), await terminalCells(reloaded)), when).toEqual([]);
}

test("a reload paints the stored copy with line drawing, scroll region, saved cursor and tab stops, equal cell by cell to a page that stayed", async ({ page, context, browser, server }) => {
  test.setTimeout(60_000);
  const session = await createNodeSession(server, program(dir));
  await logIn(context, server);
  await openTerminal(page, server, session.id);
  await waitForText(page, "READY");
  await waitForServiceWorker(page);
  // The grid has the page's size now: the program draws at it.
  await writeFile(join(dir, "draw"), "");
  await waitForText(page, "DRAWN");

  const elsewhere = await browser.newContext();
  await logIn(elsewhere, server);
  const stayed = await elsewhere.newPage();
  await openTerminal(stayed, server, session.id);
  const drawnEnd = await ringEnd(server, session.id);
  await waitForRendered(stayed, drawnEnd);
  await waitForRendered(page, drawnEnd);
  await waitForTerminal(page, ({ stats: s }) => s?.savedOffset === drawnEnd, "the stored copy is saved");
  await expectSameCells(stayed, page, "before the reload");

  // Offline, the service worker serves the page and the copy is all there is to paint.
  await context.setOffline(true);
  await page.reload();
  await waitForTerminal(
    page,
    ({ stats: s }) => s !== null && s.restoredLocally && s.renderedOffset === drawnEnd && s.firstPaintMs !== null,
    "the stored copy is painted",
  );
  expect((await stats(page))?.phase).not.toBe("live");
  await expectSameCells(stayed, page, "the stored copy, before the stream resumes");

  const frames = recordTerminalFrames(page);
  await context.setOffline(false);
  await waitForTerminal(page, ({ stats: s }) => s?.phase === "live", "the stream resumes");
  const positions = frames.received.filter((f) => f.opcode === 0x04).map((f) => JSON.parse(f.payload.subarray(1).toString()) as { mode: string });
  expect(positions.map((p) => p.mode)).toEqual(["append"]);
  await expectSameCells(stayed, page, "after the stream resumed");

  // The state that only more output shows.
  await writeFile(join(dir, "more"), "");
  await waitForText(page, "FINISHED");
  await waitForText(stayed, "FINISHED");
  const finishedEnd = await ringEnd(server, session.id);
  await waitForRendered(stayed, finishedEnd);
  await waitForRendered(page, finishedEnd);
  await expectSameCells(stayed, page, "after more output");

  // What a user reads there: the box characters, the status bar where it was, SAVED at the saved
  // cursor's column (xterm.js keeps the saved row in the buffer, so after the region scrolled its
  // lines into the history it comes back as the top row), the status bar's words at the program's
  // tab stops.
  const { rows } = (await stats(page))!;
  const screen = (await terminalLines(page)).slice(-rows);
  expect(screen.join("\n")).toMatch(/^├────┤ ROW \d+$/m);
  expect(screen[0]!.slice(29, 34)).toBe("SAVED");
  expect(screen[rows - 2]!.startsWith("FINISHED")).toBe(true);
  expect(screen[rows - 1]).toBe("    STATUS      MORE");
  await elsewhere.close();
});

/**
 * Output that stops inside a colour sequence (`ESC [ 3`, then a line feed the terminal executes
 * inside it) while the copy is saved: the copy carries the sequence's bytes so far, so after a
 * reload the `append` goes on with `1mRED` read as the rest of the sequence, not printed as text.
 */
function halfSequenceProgram(directory: string): string {
  return `${stepsIn(directory)}when("half", () => {
  out("HALF\\r\\n\\x1b[3\\r\\n");
  when("rest", () => out("1mRED\\x1b[0m DONE\\r\\n"));
});
setInterval(() => {}, 1 << 30);
`;
}

test("a copy saved while the output ends inside a sequence: after a reload the rest of it is read as the page that stayed reads it", async ({ page, context, browser, server }) => {
  test.setTimeout(60_000);
  const session = await createNodeSession(server, halfSequenceProgram(dir));
  await logIn(context, server);
  await openTerminal(page, server, session.id);
  await waitForText(page, "READY");
  await waitForServiceWorker(page);
  const elsewhere = await browser.newContext();
  await logIn(elsewhere, server);
  const stayed = await elsewhere.newPage();
  await openTerminal(stayed, server, session.id);
  await waitForText(stayed, "READY");

  await writeFile(join(dir, "half"), "");
  await waitForText(page, "HALF");
  const halfEnd = await ringEnd(server, session.id);
  await waitForRendered(page, halfEnd);
  await waitForRendered(stayed, halfEnd);
  await waitForTerminal(page, ({ stats: s }) => s?.savedOffset === halfEnd, "the stored copy is saved inside the sequence");

  await context.setOffline(true);
  await page.reload();
  await waitForTerminal(
    page,
    ({ stats: s }) => s !== null && s.restoredLocally && s.renderedOffset === halfEnd && s.firstPaintMs !== null,
    "the stored copy is painted",
  );
  await expectSameCells(stayed, page, "the stored copy, before the stream resumes");
  await context.setOffline(false);
  await waitForTerminal(page, ({ stats: s }) => s?.phase === "live", "the stream resumes");

  await writeFile(join(dir, "rest"), "");
  await waitForText(page, "DONE");
  await waitForText(stayed, "DONE");
  const doneEnd = await ringEnd(server, session.id);
  await waitForRendered(stayed, doneEnd);
  await waitForRendered(page, doneEnd);
  await expectSameCells(stayed, page, "after the rest of the sequence");
  expect((await terminalLines(page)).some((line) => line.includes("1mRED"))).toBe(false);
  expect((await terminalLines(page)).some((line) => line.startsWith("RED DONE"))).toBe(true);
  await elsewhere.close();
});
