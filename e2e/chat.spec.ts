/**
 * The chat view of a hybrid session against the real server and the scripted fake Claude Code
 * (server/testing/agents/fake): Markdown replies, permission prompts answered once for every tab,
 * Stop, AskUserQuestion (options or the user's own words), ExitPlanMode, Codex's sandbox note, an
 * offline draft sent exactly once, a move that shows the moved banner and does not reconnect, the
 * way between terminal and chat, and a phone screenshot.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Page, WebSocket as PwWebSocket } from "@playwright/test";
import type { SessionInfo } from "../server/contract/types.ts";
import { expect, test, type WebmuxServer } from "./fixtures.ts";
import { logIn, pressInTerminal, typeInTerminal, waitForPhase, waitForServiceWorker, waitForText, type PageGlobals } from "./terminal-helpers.ts";

const FAKE_CLAUDE = fileURLToPath(new URL("../server/testing/agents/fake/fake-claude.mjs", import.meta.url));
const FAKE_CODEX = fileURLToPath(new URL("../server/testing/agents/fake/fake-codex.mjs", import.meta.url));
const SCREENSHOTS = join(import.meta.dirname, "..", "test-results", "screenshots");
/**
 * How long a stopped page is watched for a reconnect that must not come: four times the first
 * backoff delay (RECONNECT_BASE_MS, 250 ms), after nudging it with `online` and a visibility change.
 */
const NO_RECONNECT_WINDOW_MS = 1_000;
/** The server's wait for an interrupted TUI to go idle (5 s), its SIGTERM grace (3 s) and some slack. */
const MOVE_WITH_INTERRUPT_TIMEOUT_MS = 15_000;
/** A fake Codex turn that runs a command: a process it spawns and a tool call, on a machine that may be busy with other work (took over 5 s beside two CPU-bound loops). */
const TOOL_TURN_TIMEOUT_MS = 15_000;
/** A turn that would outlast the test unless Stop works. */
const SLOW_TURN_SECONDS = 60;

async function createHybrid(server: WebmuxServer, end: "chat" | "terminal" = "chat"): Promise<SessionInfo> {
  const root = await mkdtemp(join(tmpdir(), "webmux-chat-e2e-"));
  const response = await server.api("/api/sessions", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      title: "agent chat",
      hybrid: { agent: "claude", end },
      cwd: tmpdir(),
      env: { WEBMUX_CLAUDE_BIN: FAKE_CLAUDE, CLAUDE_CONFIG_DIR: join(root, "claude-config"), FAKE_CLAUDE_DELTA_MS: "5" },
    }),
  });
  expect(response.status, await response.clone().text()).toBe(201);
  return (await response.json()) as SessionInfo;
}

async function hybridState(server: WebmuxServer, id: string): Promise<string> {
  const info = (await (await server.api(`/api/sessions/${id}`)).json()) as SessionInfo;
  return `${info.hybrid?.end}:${info.hybrid?.state}`;
}

async function openChat(page: Page, server: WebmuxServer, id: string): Promise<void> {
  await page.goto(`${server.url}/s/${id}/chat`);
  await expect(page.locator(".chat-page")).toHaveAttribute("data-phase", "live");
}

async function compose(page: Page, text: string): Promise<void> {
  await page.getByLabel("Prompt").fill(text);
  await page.getByRole("button", { name: "Send", exact: true }).click();
}

const userTurns = (page: Page, text: string) => page.locator(".chat-msg--user", { hasText: text });
const assistant = (page: Page) => page.locator(".chat-msg--assistant");
const draft = (page: Page, body: string) => page.locator(".compose__draft", { hasText: body });

/** Counts the chat sockets a page opens (register before it loads). */
function countChatSockets(page: Page): () => number {
  let opened = 0;
  page.on("websocket", (ws: PwWebSocket) => {
    if (/\/ws\/s\/[^/]+\/chat/.test(ws.url())) opened += 1;
  });
  return () => opened;
}

/** How far the page scrolls sideways (0 when it fits the viewport). */
function sidewaysOverflow(page: Page): Promise<number> {
  return page.evaluate(() => {
    const root = (globalThis as unknown as PageGlobals).document.documentElement;
    return root.scrollWidth - root.clientWidth;
  });
}

test("a send renders the assistant's Markdown reply, code blocks as <pre><code>", async ({ page, server }) => {
  const session = await createHybrid(server);
  await logIn(page.context(), server);
  await openChat(page, server, session.id);

  await compose(page, "say Here is **bold** and a [link](https://example.com):\n\n```js\nconsole.log(1)\n```\n\n<img src=x onerror=alert(1)>");
  await expect(userTurns(page, "say Here is")).toHaveCount(1);
  const reply = assistant(page).last();
  await expect(reply.locator("pre > code")).toHaveText("console.log(1)\n");
  await expect(reply.locator("strong")).toHaveText("bold");
  await expect(reply.locator("a")).toHaveAttribute("rel", "noopener noreferrer");
  await expect(reply.locator("a")).toHaveAttribute("target", "_blank");
  // The agent's HTML is text, not an element.
  await expect(reply).toContainText("<img src=x onerror=alert(1)>");
  await expect(reply.locator("img")).toHaveCount(0);
  // Written, it is a turn in the transcript and leaves the draft list (failed ones would stay).
  await expect(draft(page, "say Here is")).toHaveCount(0);
  await expect(page.locator(".chat-status")).toContainText("Claude · ready");
});

test("the session list shows a hybrid session's end and state and opens its chat", async ({ page, server }) => {
  const session = await createHybrid(server);
  await logIn(page.context(), server);
  await page.goto(server.url);
  const row = page.locator(`[data-session-id="${session.id}"]`);
  await expect(row.locator(".badge--hybrid")).toHaveText("chat · idle");
  await expect(row.getByRole("button", { name: "Restart" })).toHaveCount(0);
  await row.locator(".session__main").click();
  await expect(page).toHaveURL(`${server.url}/s/${session.id}/chat`);
  await expect(page.locator(".chat-page")).toHaveAttribute("data-phase", "live");
});

test("a permission answered Allow in one tab shows resolved in the other", async ({ page, server }) => {
  const session = await createHybrid(server);
  await logIn(page.context(), server);
  await openChat(page, server, session.id);
  const other = await page.context().newPage();
  await openChat(other, server, session.id);

  await compose(page, 'tool Bash {"command":"make test"}');
  for (const tab of [page, other]) {
    const prompt = tab.getByRole("region", { name: "Permission for Bash" });
    await expect(prompt).toContainText("make test");
    await expect(prompt.getByRole("button", { name: "Allow" })).toBeEnabled();
  }
  await page.getByRole("region", { name: "Permission for Bash" }).getByRole("button", { name: "Allow" }).click();

  for (const tab of [other, page]) {
    await expect(tab.getByRole("region", { name: "Permission for Bash" })).toHaveCount(0);
    const call = tab.locator('.chat-tool[data-tool="Bash"]');
    await expect(call).toHaveAttribute("data-decision", "allow");
    await expect(call.locator(".chat-tool__badge")).toHaveText(/^allowed by /);
    await expect(call.locator(".chat-tool__result")).toContainText('ran Bash {"command":"make test"}');
  }
  await other.close();
});

test("AskUserQuestion shows its options as buttons and answers with the chosen one", async ({ page, server }) => {
  const session = await createHybrid(server);
  await logIn(page.context(), server);
  await openChat(page, server, session.id);
  const question = { questions: [{ question: "Which database?", header: "DB", multiSelect: false, options: [{ label: "Postgres", description: "a server" }, { label: "SQLite", description: "a file" }] }] };
  await compose(page, `tool AskUserQuestion ${JSON.stringify(question)}`);

  const card = page.getByRole("region", { name: "Question" });
  await expect(card).toContainText("Which database?");
  await card.getByRole("button", { name: /SQLite/ }).click();
  await expect(card).toHaveCount(0);
  await expect(page.locator('.chat-tool[data-tool="AskUserQuestion"] .chat-tool__result')).toContainText('Your questions have been answered: "Which database?"="SQLite"');
});

test("AskUserQuestion takes an answer in the user's own words, beside the options", async ({ page, server }) => {
  const session = await createHybrid(server);
  await logIn(page.context(), server);
  await openChat(page, server, session.id);
  const question = { questions: [{ question: "Which color?", header: "Color", multiSelect: false, options: [{ label: "Red", description: "warm" }, { label: "Blue", description: "cool" }] }] };
  await compose(page, `tool AskUserQuestion ${JSON.stringify(question)}`);

  const card = page.getByRole("region", { name: "Question" });
  await expect(card.getByRole("button", { name: "Send answers" })).toBeDisabled();
  await card.getByLabel("Your own answer: Which color?").fill("Green, like grass");
  // With words typed in, a tap on an option no longer sends: the words are the answer.
  await card.getByRole("button", { name: /Red/ }).click();
  await expect(card).toHaveCount(1);
  await card.getByRole("button", { name: "Send answers" }).click();
  await expect(card).toHaveCount(0);
  await expect(page.locator('.chat-tool[data-tool="AskUserQuestion"] .chat-tool__result')).toContainText('"Which color?"="Green, like grass"');
});

test("ExitPlanMode shows the plan: Keep planning sends what to change, Approve plan lets the agent start", async ({ page, server }) => {
  const session = await createHybrid(server);
  await logIn(page.context(), server);
  await openChat(page, server, session.id);

  await compose(page, `tool ExitPlanMode ${JSON.stringify({ plan: "1. **Add** the route\n2. Test it" })}`);
  const card = page.getByRole("region", { name: "Plan" });
  await expect(card.locator("ol > li strong")).toHaveText("Add");
  await card.getByLabel("What should change in the plan").fill("Also update the docs");
  await card.getByRole("button", { name: "Keep planning" }).click();
  await expect(card).toHaveCount(0);
  const refused = page.locator('.chat-tool[data-tool="ExitPlanMode"]').last();
  await expect(refused).toHaveAttribute("data-decision", "deny");
  await expect(refused.locator(".chat-tool__result")).toHaveText("Also update the docs");

  await compose(page, `tool ExitPlanMode ${JSON.stringify({ plan: "1. Add the route\n2. Test it\n3. Update the docs" })}`);
  await page.getByRole("region", { name: "Plan" }).getByRole("button", { name: "Approve plan" }).click();
  const approved = page.locator('.chat-tool[data-tool="ExitPlanMode"]').last();
  await expect(approved).toHaveAttribute("data-decision", "allow");
  await expect(approved.locator(".chat-tool__result")).toContainText("User has approved your plan");
});

test("a Codex chat says what Codex may do without asking (its sandbox)", async ({ page, server }) => {
  const root = await mkdtemp(join(tmpdir(), "webmux-chat-e2e-codex-"));
  const response = await server.api("/api/sessions", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ hybrid: { agent: "codex", end: "chat" }, cwd: root, env: { WEBMUX_CODEX_BIN: FAKE_CODEX, CODEX_HOME: join(root, "codex-home") } }),
  });
  expect(response.status, await response.clone().text()).toBe(201);
  const session = (await response.json()) as SessionInfo;
  await logIn(page.context(), server);
  await openChat(page, server, session.id);
  await expect(page.getByRole("note", { name: "What the agent may do" })).toContainText("may write inside this workspace only");
  await compose(page, "run touch notes.txt");
  await expect(page.locator('.chat-tool[data-tool="shell"] .chat-tool__result')).toHaveText("ran touch notes.txt", { timeout: TOOL_TURN_TIMEOUT_MS });
});

test("Stop interrupts a slow turn", async ({ page, server }) => {
  const session = await createHybrid(server);
  await logIn(page.context(), server);
  await openChat(page, server, session.id);

  await compose(page, `slow ${SLOW_TURN_SECONDS}`);
  const busy = page.getByRole("status", { name: "The agent is working" });
  await expect(busy).toBeVisible();
  await expect(assistant(page).last()).toContainText("Working");
  await busy.getByRole("button", { name: "Stop" }).click();
  await expect(busy).toHaveCount(0, { timeout: 10_000 });
  await expect(page.locator(".chat-status")).toContainText("last turn interrupted");
  expect(await hybridState(server, session.id)).toBe("chat:idle");
});

/** A hybrid session, a service worker, a reload and a turn: beside two CPU-bound jobs this took over 30 s. */
const OFFLINE_DRAFT_TEST_TIMEOUT_MS = 90_000;

test("a draft written offline is sent exactly once, across a reload while offline", async ({ page, server }) => {
  test.setTimeout(OFFLINE_DRAFT_TEST_TIMEOUT_MS);
  const session = await createHybrid(server);
  await logIn(page.context(), server);
  await openChat(page, server, session.id);
  await waitForServiceWorker(page);

  await page.context().setOffline(true);
  await expect(page.locator(".chat-page")).toHaveAttribute("data-phase", "waiting");
  await compose(page, "say offline hello");
  await expect(draft(page, "say offline hello")).toHaveAttribute("data-state", "queued");

  await page.reload();
  await expect(draft(page, "say offline hello")).toHaveAttribute("data-state", "queued");
  await page.context().setOffline(false);
  await expect(assistant(page).filter({ hasText: "offline hello" })).toHaveCount(1, { timeout: 15_000 });
  await expect(draft(page, "say offline hello")).toHaveCount(0);
  await expect(userTurns(page, "say offline hello")).toHaveCount(1);

  // A later connect queries nothing into a second turn.
  await page.reload();
  await expect(page.locator(".chat-page")).toHaveAttribute("data-phase", "live");
  await compose(page, "say second");
  await expect(assistant(page).filter({ hasText: "second" })).toHaveCount(1);
  await expect(userTurns(page, "say offline hello")).toHaveCount(1);
});

test("a move to the terminal shows the moved banner and the page does not reconnect", async ({ page, server }) => {
  const session = await createHybrid(server);
  await logIn(page.context(), server);
  const chatSockets = countChatSockets(page);
  await openChat(page, server, session.id);
  expect(chatSockets()).toBe(1);

  const moved = await server.api(`/api/sessions/${session.id}/move`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ to: "terminal" }) });
  expect(moved.status).toBe(200);
  const banner = page.getByRole("alert").filter({ hasText: "Moved to the terminal" });
  await expect(banner).toBeVisible();
  await expect(page.locator(".chat-page")).toHaveAttribute("data-phase", "stopped");

  // What would bring a waiting connection back at once: going online, becoming visible.
  await page.evaluate(() => {
    const g = globalThis as unknown as { dispatchEvent(e: unknown): void; document: { dispatchEvent(e: unknown): void }; Event: new (type: string) => unknown };
    g.dispatchEvent(new g.Event("online"));
    g.document.dispatchEvent(new g.Event("visibilitychange"));
  });
  await page.waitForTimeout(NO_RECONNECT_WINDOW_MS);
  expect(chatSockets()).toBe(1);
  await expect(page.locator(".chat-page")).toHaveAttribute("data-phase", "stopped");

  await banner.getByRole("button", { name: "Open terminal" }).click();
  await expect(page).toHaveURL(`${server.url}/s/${session.id}`);
  await waitForPhase(page, "live");
});

test("Open terminal, then Continue in chat (interrupting a busy agent) lands on the chat with its history", async ({ page, server }) => {
  const session = await createHybrid(server);
  await logIn(page.context(), server);
  await openChat(page, server, session.id);
  await compose(page, "say first reply from the chat");
  await expect(assistant(page).filter({ hasText: "first reply from the chat" })).toHaveCount(1);

  await page.getByRole("button", { name: "Open terminal" }).click();
  await expect(page).toHaveURL(`${server.url}/s/${session.id}`);
  await waitForPhase(page, "live");
  await waitForText(page, "Fake Claude Code");
  expect(await hybridState(server, session.id)).toMatch(/^terminal:/);

  // A busy agent: the move asks before it interrupts.
  await typeInTerminal(page, `slow ${SLOW_TURN_SECONDS}`);
  await pressInTerminal(page, "Enter");
  await expect.poll(() => hybridState(server, session.id)).toBe("terminal:busy");
  await page.getByRole("button", { name: "Continue in chat" }).click();
  const confirm = page.getByRole("dialog", { name: "The agent is busy" });
  await expect(confirm).toBeVisible();
  await confirm.getByRole("button", { name: "Interrupt" }).click();

  // Claude runs no Stop hook after an Esc interrupt: the server gives the TUI its 5 s, then ends it.
  await expect(page).toHaveURL(`${server.url}/s/${session.id}/chat`, { timeout: MOVE_WITH_INTERRUPT_TIMEOUT_MS });
  await expect(page.locator(".chat-page")).toHaveAttribute("data-phase", "live");
  await expect(assistant(page).filter({ hasText: "first reply from the chat" })).toHaveCount(1);
  await expect(userTurns(page, `slow ${SLOW_TURN_SECONDS}`)).toHaveCount(1);
});

test("a terminal page opened while the session is at its chat end shows the moved banner and follows it", async ({ page, server }) => {
  const session = await createHybrid(server);
  await logIn(page.context(), server);
  await page.goto(`${server.url}/s/${session.id}`);
  const banner = page.getByRole("alert").filter({ hasText: "Moved to the chat" });
  await expect(banner).toBeVisible();
  await banner.getByRole("button", { name: "Open chat" }).click();
  await expect(page).toHaveURL(`${server.url}/s/${session.id}/chat`);
  await expect(page.locator(".chat-page")).toHaveAttribute("data-phase", "live");
});

test.describe("phone", () => {
  test.use({ viewport: { width: 360, height: 740 }, isMobile: true, hasTouch: true });

  test("the chat at 360×740: a reply with code, a tool call and a pending permission fit the width", async ({ page, server }) => {
    await page.emulateMedia({ colorScheme: "dark" });
    const session = await createHybrid(server);
    await logIn(page.context(), server);
    await openChat(page, server, session.id);
    await compose(page, "say Build it with:\n\n```sh\nnpm run build -- --mode production --outDir dist/client --emptyOutDir\n```\n\nThen run the tests.");
    await expect(assistant(page).locator("pre > code")).toHaveCount(1);
    await compose(page, 'tool Bash {"command":"npm test -- --reporter=verbose"}');
    await expect(page.getByRole("region", { name: "Permission for Bash" })).toBeVisible();

    expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(SCREENSHOTS, "chat-phone-dark.png") });
    await page.emulateMedia({ colorScheme: "light" });
    await expect(page.locator("html")).toHaveAttribute("data-theme", "light");
    await page.screenshot({ path: join(SCREENSHOTS, "chat-phone-light.png") });

    // Its row in the list: the agent's state where the status badge would be, still one phone wide.
    await page.getByRole("link", { name: "Back to sessions" }).click();
    await expect(page.locator(`[data-session-id="${session.id}"] .badge--hybrid`)).toHaveText("chat · needs you");
    expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0);
    // The title keeps room beside the badges.
    expect((await page.locator(`[data-session-id="${session.id}"] .session__title`).boundingBox())!.width).toBeGreaterThan(60);
    await page.screenshot({ path: join(SCREENSHOTS, "chat-list-phone-light.png") });
  });
});
