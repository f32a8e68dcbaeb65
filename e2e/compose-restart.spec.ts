/**
 * Server restarted while a draft was `received`, its sessions in the server process
 * (`--stop-sessions-on-exit`, the fixture's default; docs/design.md § What survives a restart): after a restart the session is gone ("This session
 * no longer exists"), so there is no later generation of it to deliver to. What the user must see: the draft the old run had
 * received is never sent again (not on reconnect, not after a reload), and no draft is left
 * waiting forever — the received one may have been written before the end, so it says so
 * (`missing`, "unknown"), one that was never sent is `failed: generation`; neither offers a
 * Resend into nowhere, both can be discarded. (Resending a failed draft exactly once into a
 * session's new generation is compose.spec's "a draft for a generation that ended".)
 *
 * The draft stays `received` because the program never reads its input: a body larger than the
 * PTY's kernel buffer cannot drain, and `written` is announced only once it has.
 */
import type { Page } from "@playwright/test";
import { expect, test } from "./fixtures.ts";
import { createNodeSession, logIn, openTerminal, recordTerminalFrames, waitForPhase, waitForText } from "./terminal-helpers.ts";

/** Raw mode and never a read: whatever is written to it stays in the PTY. */
const HOLDER = `process.stdin.setRawMode(true); process.stdout.write("holding\\r\\n"); setInterval(() => {}, 1 << 30);`;
/** Far more than a PTY buffers (a few KiB to 64 KiB), inside the 256 KiB body limit (docs/protocol.md § Limits). */
const HELD_BODY_BYTES = 200 * 1024;
/** Client frame 0x03: a submission. */
const SUBMIT_FRAME = 0x03;

const draft = (page: Page, start: string) => page.locator(".compose__draft", { hasText: start });

async function compose(page: Page, text: string): Promise<void> {
  await page.getByLabel("Prompt").fill(text);
  await page.getByRole("button", { name: "Send" }).click();
}

for (const crash of [false, true]) {
  test(`server ${crash ? "killed" : "restarted"} while a draft was received: it is not sent again, and nothing waits forever`, async ({ page, server }) => {
    // A server restart (a new process under tsx) on a busy 2-core machine outlasts the default 30 s.
    test.setTimeout(90_000);
    const session = await createNodeSession(server, HOLDER);
    await logIn(page.context(), server);
    const frames = recordTerminalFrames(page);
    const submits = () => frames.sent.filter((f) => f.opcode === SUBMIT_FRAME).length;
    await openTerminal(page, server, session.id);
    await waitForText(page, "holding");

    await compose(page, "held-prompt " + "x".repeat(HELD_BODY_BYTES));
    const held = draft(page, "held-prompt");
    await expect(held).toHaveAttribute("data-state", "received");
    // Offline meanwhile: this one is only queued when the server goes away.
    await page.context().setOffline(true);
    await waitForPhase(page, "waiting");
    await compose(page, "queued-prompt");
    await expect(draft(page, "queued-prompt")).toHaveAttribute("data-state", "queued");
    expect(submits()).toBe(1);

    await server.restart({ crash });
    await page.context().setOffline(false);
    await expect(page.getByText("This session no longer exists.")).toBeVisible({ timeout: 15_000 });
    for (const reload of [false, true]) {
      if (reload) {
        await page.reload();
        await expect(page.getByText("This session no longer exists.")).toBeVisible();
      }
      await expect(held).toHaveAttribute("data-state", "missing");
      await expect(held).toContainText("unknown: the session ended while it was being sent");
      const queued = draft(page, "queued-prompt");
      await expect(queued).toHaveAttribute("data-state", "failed");
      await expect(queued).toHaveAttribute("data-error", "generation");
      await expect(queued).toContainText("failed: the session no longer exists");
      await expect(page.getByRole("button", { name: "Resend" })).toHaveCount(0);
      // The held draft went out once, before the restart; the queued one never did.
      expect(submits()).toBe(1);
    }

    await held.getByRole("button", { name: "Discard" }).click();
    await draft(page, "queued-prompt").getByRole("button", { name: "Discard" }).click();
    await expect(page.locator(".compose__draft")).toHaveCount(0);
  });
}
