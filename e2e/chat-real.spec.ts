/**
 * The chat view against the real Claude Code and Codex (the pinned CLIs the hybrid tests install,
 * server/testing/agents/real-agents.ts) talking to mock model APIs on 127.0.0.1: what a user taps
 * reaches the real program in the shape it takes — a permission allowed, AskUserQuestion answered
 * in the user's own words, Codex's sandbox said and used.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "@playwright/test";
import type { SessionInfo } from "../server/contract/types.ts";
import { realAgentCli, startRealClaude, startRealCodex, type RealClaude, type RealCodex } from "../server/testing/agents/real-agents.ts";
import { expect, test, type WebmuxServer } from "./fixtures.ts";
import { logIn } from "./terminal-helpers.ts";

/** A real agent's start and turns against the local mock: seconds each, more on a busy machine. */
const REAL_TEST_TIMEOUT_MS = 120_000;
/** A real turn's reply reaching the page. */
const REPLY_TIMEOUT_MS = 30_000;

const claude = realAgentCli("claude");
const codex = realAgentCli("codex");

async function createHybrid(server: WebmuxServer, agent: "claude" | "codex", kit: { cwd: string; env: Record<string, string> }): Promise<SessionInfo> {
  const response = await server.api("/api/sessions", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ title: `real ${agent}`, hybrid: { agent, end: "chat" }, cwd: kit.cwd, env: kit.env }),
  });
  expect(response.status, await response.clone().text()).toBe(201);
  return (await response.json()) as SessionInfo;
}

async function openChat(page: Page, server: WebmuxServer, id: string): Promise<void> {
  await logIn(page.context(), server);
  await page.goto(`${server.url}/s/${id}/chat`);
  await expect(page.locator(".chat-page")).toHaveAttribute("data-phase", "live");
  await expect(page.locator(".chat-status")).toContainText("ready", { timeout: REPLY_TIMEOUT_MS });
}

async function compose(page: Page, text: string): Promise<void> {
  await page.getByLabel("Prompt").fill(text);
  await page.getByRole("button", { name: "Send", exact: true }).click();
}

test.describe("the real Claude Code", () => {
  test.skip(claude.skip !== undefined, claude.skip ?? "");
  let kit: RealClaude;
  test.beforeAll(async () => {
    kit = await startRealClaude(claude.path!);
    kit.mock.script("say hello", { text: "Hello **world**:\n\n```js\nconsole.log(1)\n```" });
    kit.mock.script("run tool", { tool: "Bash", input: { command: "touch made-in-the-chat.txt", description: "make a file" } }, { text: "made it" });
    kit.mock.script("ask me", { tool: "AskUserQuestion", input: { questions: [{ question: "Which color?", header: "Color", multiSelect: false, options: [{ label: "Red", description: "warm" }, { label: "Blue", description: "cool" }] }] } }, { text: "noted" });
  });
  test.afterAll(async () => {
    await kit?.stop();
  });

  test("a Markdown reply, a permission allowed, AskUserQuestion answered in the user's own words", async ({ page, server }) => {
    test.setTimeout(REAL_TEST_TIMEOUT_MS);
    const session = await createHybrid(server, "claude", kit);
    await openChat(page, server, session.id);

    await compose(page, "say hello");
    const reply = page.locator(".chat-msg--assistant").last();
    await expect(reply.locator("strong")).toHaveText("world", { timeout: REPLY_TIMEOUT_MS });
    await expect(reply.locator("pre > code")).toHaveText("console.log(1)\n");

    await compose(page, "run tool");
    const permission = page.getByRole("region", { name: "Permission for Bash" });
    await expect(permission).toContainText("touch made-in-the-chat.txt", { timeout: REPLY_TIMEOUT_MS });
    await permission.getByRole("button", { name: "Allow" }).click();
    await expect(page.locator(".chat-msg--assistant").last()).toContainText("made it", { timeout: REPLY_TIMEOUT_MS });
    expect(existsSync(join(kit.cwd, "made-in-the-chat.txt"))).toBe(true);

    await compose(page, "ask me");
    const card = page.getByRole("region", { name: "Question" });
    await card.getByLabel("Your own answer: Which color?").fill("Green, like grass", { timeout: REPLY_TIMEOUT_MS });
    await card.getByRole("button", { name: "Send answers" }).click();
    await expect(page.locator(".chat-msg--assistant").last()).toContainText("noted", { timeout: REPLY_TIMEOUT_MS });
    // What the model was told, in the real tool's words.
    const told = JSON.stringify(kit.mock.mainRequests("ask me").at(-1)!.body.messages);
    expect(told).toContain(JSON.stringify('"Which color?"="Green, like grass"').slice(1, -1));
  });
});

test.describe("the real Codex", () => {
  test.skip(codex.skip !== undefined, codex.skip ?? "");
  let kit: RealCodex;
  test.beforeAll(async () => {
    kit = await startRealCodex(codex.path!);
    kit.mock.script("run tool", { shell: "touch made-by-codex.txt" }, { text: "made it" });
  });
  test.afterAll(async () => {
    await kit?.stop();
  });

  test("the chat says what Codex may do without asking, and Codex does it", async ({ page, server }) => {
    test.setTimeout(REAL_TEST_TIMEOUT_MS);
    const session = await createHybrid(server, "codex", kit);
    await openChat(page, server, session.id);
    await expect(page.getByRole("note", { name: "What the agent may do" })).toContainText("may write inside this workspace only");
    await compose(page, "run tool");
    await expect(page.locator(".chat-msg--assistant").last()).toContainText("made it", { timeout: REPLY_TIMEOUT_MS });
    await expect(page.locator('.chat-tool[data-tool="shell"]')).toContainText("touch made-by-codex.txt");
    expect(existsSync(join(kit.cwd, "made-by-codex.txt"))).toBe(true);
  });
});
