/**
 * Reconnect and resume: after a network drop or a socket closed mid-output the terminal ends with
 * exactly the program's output, every line once; 4404 and 4410 stop and say why.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import type { Page } from "@playwright/test";
import { expect, test, type WebmuxServer } from "./fixtures.ts";
import {
  createNodeSession,
  createSession,
  logIn,
  openTerminal,
  PROMPT,
  recordTerminalFrames,
  stats,
  terminalLines,
  typeInTerminal,
  waitForPhase,
  waitForText,
} from "./terminal-helpers.ts";

/** The fake Claude Code a hybrid session runs in tests (server/hybrid). */
const FAKE_CLAUDE = fileURLToPath(new URL("../server/testing/agents/fake/fake-claude.mjs", import.meta.url));
const LINES = 3000;
/**
 * Prints line-1 … line-3000, two per millisecond, once it reads `g`: a few seconds of output.
 * With a gate (a file path) it stops after line-1500 until that file exists, so a test can cut the
 * tab off first however slowly a busy machine gets there and still have half the output to come.
 */
function counter(gate?: string): string {
  return `
const { existsSync } = require("node:fs");
const gate = ${JSON.stringify(gate ?? null)};
process.stdin.setRawMode(true);
process.stdout.write("press g\\r\\n");
process.stdin.once("data", () => {
  let i = 0;
  const timer = setInterval(() => {
    if (gate && i === ${LINES / 2} && !existsSync(gate)) return;
    for (let k = 0; k < 2 && i < ${LINES}; k++) process.stdout.write("line-" + ++i + "\\r\\n");
    if (i === ${LINES}) { clearInterval(timer); process.stdout.write("done\\r\\n"); }
  }, 1);
});
setInterval(() => {}, 1 << 30);
`;
}
const COUNTER = counter();

async function expectEveryLineOnce(page: Page) {
  await waitForText(page, /^done$/m, 20_000);
  const counted = (await terminalLines(page)).filter((line) => /^line-\d+$/.test(line));
  expect(counted).toEqual(Array.from({ length: LINES }, (_, i) => `line-${i + 1}`));
}

async function ringEnd(server: WebmuxServer, id: string): Promise<number> {
  const response = await server.api(`/api/sessions/${id}/buffer`);
  await response.arrayBuffer();
  return Number(response.headers.get("x-webmux-end"));
}

test("a network drop mid-output resumes with exactly the missing bytes", async ({ page, context, server }, testInfo) => {
  const gate = testInfo.outputPath("print-the-rest");
  const session = await createNodeSession(server, counter(gate));
  await logIn(context, server);
  const frames = recordTerminalFrames(page);
  await openTerminal(page, server, session.id);
  await waitForText(page, "press g");
  await typeInTerminal(page, "g");
  await waitForText(page, /^line-300$/m);

  await context.setOffline(true);
  await waitForPhase(page, "waiting");
  const hint = page.getByRole("status").filter({ hasText: "Restoring" });
  await expect(hint).toBeVisible();
  // A hint beside the terminal, not over it (the overlay is for full replays only).
  const hintBox = (await hint.boundingBox())!;
  const terminalBox = (await page.locator(".term-box").boundingBox())!;
  expect(hintBox.y + hintBox.height).toBeLessThanOrEqual(terminalBox.y);
  await expect(page.locator(".term-overlay")).toBeHidden();
  // The program keeps printing while this tab is cut off.
  const cutAt = (await stats(page))!.offset;
  mkdirSync(dirname(gate), { recursive: true });
  writeFileSync(gate, "");
  await expect.poll(() => ringEnd(server, session.id)).toBeGreaterThan(cutAt + 1000);

  await context.setOffline(false);
  await waitForPhase(page, "live");
  await expectEveryLineOnce(page);
  const positions = frames.received.filter((f) => f.opcode === 0x04).map((f) => JSON.parse(f.payload.subarray(1).toString()));
  expect(positions.map((p) => p.mode)).toEqual(["reset", "append"]);
  expect(positions[1].start).toBe(cutAt);
  expect((await stats(page))?.waits).toBe(1);
  await expect(page.getByRole("status").filter({ hasText: "Restoring" })).toBeHidden();
});

for (const { code, why, waits } of [
  { code: 1011, why: "an internal error", waits: 1 },
  { code: 4408, why: "too slow (4408: reconnect at once)", waits: 0 },
]) {
  test(`a socket the server side closes mid-output with ${why} is reconnected and resumed`, async ({ page, context, server }) => {
    const session = await createNodeSession(server, COUNTER);
    await logIn(context, server);
    let connections = 0;
    // Between page and server: the first connection is closed after 40 frames, mid-output.
    await page.routeWebSocket(/\/ws\/s\//, (ws) => {
      const upstream = ws.connectToServer();
      const cut = ++connections === 1;
      let frames = 0;
      upstream.onMessage((message) => {
        ws.send(message);
        if (cut && ++frames === 40) {
          void ws.close({ code, reason: "test: closed by the server side" });
          void upstream.close();
        }
      });
    });
    await openTerminal(page, server, session.id);
    await waitForText(page, "press g");
    await typeInTerminal(page, "g");
    await expectEveryLineOnce(page);
    expect(connections).toBe(2);
    // Backoff after a drop; 4408 asks for an immediate reconnect.
    expect((await stats(page))?.waits).toBe(waits);
  });
}

test("a session that does not exist (4404) says so and is not retried", async ({ page, context, server }) => {
  await logIn(context, server);
  await page.goto(`${server.url}/s/zzzz0000`);
  await expect(page.getByText("This session no longer exists.")).toBeVisible();
  await waitForPhase(page, "stopped");
  expect((await stats(page))?.opens).toBe(1);
  await page.getByRole("button", { name: "Sessions" }).click();
  await expect(page.getByRole("heading", { name: "Sessions" })).toBeVisible();
});

test("a session moved to its chat end (4409) says where it went and is never reconnected", async ({ page, context, server }) => {
  const response = await server.api("/api/sessions", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ title: "agent chat", hybrid: { agent: "claude", end: "chat" }, cwd: tmpdir(), env: { WEBMUX_CLAUDE_BIN: FAKE_CLAUDE } }),
  });
  expect(response.status, await response.clone().text()).toBe(201);
  const session = (await response.json()) as { id: string };
  await logIn(context, server);
  await page.goto(`${server.url}/s/${session.id}`);
  await expect(page.getByRole("alert").filter({ hasText: "Moved to the chat" })).toBeVisible();
  await waitForPhase(page, "stopped");
  // Terminal: no retry is scheduled, and the one socket was all.
  expect(await stats(page).then((s) => s && [s.opens, s.waits])).toEqual([1, 0]);
});

test("deleting the session while attached ends the view", async ({ page, context, server }) => {
  const session = await createSession(server);
  await logIn(context, server);
  await openTerminal(page, server, session.id);
  await waitForText(page, PROMPT);
  expect((await server.api(`/api/sessions/${session.id}`, { method: "DELETE" })).status).toBe(204);
  // Told "deleted" (4404), not the exit status the hang-up gives the program a moment later.
  await expect(page.getByText("This session no longer exists.")).toBeVisible();
  await waitForPhase(page, "stopped");
  await expect(page.getByText("Exited with code")).toHaveCount(0);
  expect(await stats(page).then((s) => s && [s.opens, s.waits])).toEqual([1, 0]);
});

test("an exited program shows its exit code, keeps its last screen and can be restarted", async ({ page, context, server }) => {
  const session = await createSession(server);
  await logIn(context, server);
  await openTerminal(page, server, session.id);
  await waitForText(page, PROMPT);
  await typeInTerminal(page, "echo last words; exit 3\n");
  await expect(page.getByText("Exited with code 3")).toBeVisible();
  await waitForText(page, /^last words$/m);

  // Attaching to the exited session replays its screen, then 0x03 and 4410.
  await page.reload();
  await expect(page.getByText("Exited with code 3")).toBeVisible();
  await waitForText(page, /^last words$/m);

  await page.getByRole("button", { name: "Restart" }).click();
  await waitForPhase(page, "live");
  await expect(page.getByText("You control")).toBeVisible();
  await typeInTerminal(page, "echo again\n");
  await waitForText(page, /^again$/m);
  // A new generation starts from a clean screen.
  expect(await terminalLines(page)).not.toContain("last words");
});
