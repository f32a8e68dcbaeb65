/**
 * A draft the session host received and wrote, the server killed (kill -9) before the `written`
 * status reached the browser, a new server on the same data dir: the page reconnects on its own,
 * the compose box shows the draft delivered and never sends it again, and the program read it
 * once (docs/design.md § What survives a restart). The first server holds every `written` back
 * (WEBMUX_TEST_HOLD_SUBMIT_ANSWERS), so the kill lands inside that window every time. The stream
 * is relayed through the server (WEBMUX_HOST_STREAMS=relay, the path Bun and TLS take): a stream the
 * host serves itself does not drop with the server at all (docs/design.md § The session host serves
 * the streams; server/host/survive-restart.test.ts covers its submissions).
 */
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "@playwright/test";
import { expect, test } from "./fixtures.ts";
import { createNodeSession, logIn, openTerminal, recordTerminalFrames, waitForPhase, waitForText } from "./terminal-helpers.ts";

/** Client frame 0x03: a submission. */
const SUBMIT_FRAME = 0x03;

/** Appends every byte it reads (raw mode) to a file and says how many drafts it has seen. */
const recorder = (file: string, marker: string) => `
const fs = require("fs");
process.stdin.setRawMode(true);
let text = "";
process.stdin.on("data", (d) => {
  fs.appendFileSync(${JSON.stringify(file)}, d);
  text += d.toString("latin1");
  process.stdout.write("seen " + (text.split(${JSON.stringify(marker)}).length - 1) + "\\r\\n");
});
process.stdout.write("recording\\r\\n");
setInterval(() => {}, 1 << 30);
`;

const draft = (page: Page, start: string) => page.locator(".compose__draft", { hasText: start });

test.use({ sessionHost: true, serverEnv: { WEBMUX_TEST_HOLD_SUBMIT_ANSWERS: "1", WEBMUX_HOST_STREAMS: "relay" } });

test("server killed after the host wrote a draft, before the browser heard: after the restart it shows delivered, never resent", async ({ page, server }) => {
  // A session host, a server restart and the host's stop at the end: on a busy 2-core machine the
  // whole outlasts the default 30 s (its waits alone may take 45).
  test.setTimeout(90_000);
  const file = join(await mkdtemp(join(tmpdir(), "webmux-compose-host-")), "input");
  const marker = "host-held-prompt";
  const session = await createNodeSession(server, recorder(file, marker));
  await logIn(page.context(), server);
  const frames = recordTerminalFrames(page);
  const submits = () => frames.sent.filter((f) => f.opcode === SUBMIT_FRAME).length;
  await openTerminal(page, server, session.id);
  await waitForText(page, "recording");

  await page.getByLabel("Prompt").fill(marker);
  await page.getByRole("button", { name: "Send" }).click();
  // The program read it (so the host wrote it); the browser still has only `received`.
  await waitForText(page, "seen 1");
  await expect(draft(page, marker)).toHaveAttribute("data-state", "received");
  expect(submits()).toBe(1);

  await server.restart({ crash: true });
  await waitForPhase(page, "live", 30_000);
  await expect(draft(page, marker)).toHaveAttribute("data-state", "written", { timeout: 15_000 });
  const listed = (await (await server.api("/api/sessions")).json()) as { sessions: { id: string; generation: string }[] };
  expect(listed.sessions.map((s) => [s.id, s.generation])).toEqual([[session.id, session.generation]]);
  await page.reload();
  await waitForPhase(page, "live");
  await expect(draft(page, marker)).toHaveAttribute("data-state", "written");
  expect(submits()).toBe(1);
  expect((await readFile(file, "latin1")).split(marker).length - 1).toBe(1);
});
