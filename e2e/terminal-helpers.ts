/**
 * Helpers for the terminal specs: deterministic shells and programs, logging a browser context in,
 * and reading the terminal through the client's `window.__webmux` debug hook.
 */
import type { BrowserContext, Page, WebSocket as PwWebSocket } from "@playwright/test";
import type { SessionInfo } from "../server/contract/types.ts";
import type { WebmuxDebug, WebmuxDebugTerminal } from "../client/src/terminal/debug-types.ts";
import { expect, type WebmuxServer } from "./fixtures.ts";

/** What the client's `window.__webmux` debug hook (client/src/terminal/debug-hook.ts) reports. */
export type Stats = ReturnType<WebmuxDebugTerminal["stats"]>;

/** The page globals the specs read, typed here because the e2e type check has no DOM library. */
export type PageGlobals = {
  __webmux?: WebmuxDebug;
  open(url: string): unknown;
  location: { href: string };
  sessionStorage: { getItem(key: string): string | null; setItem(key: string, value: string): void };
  document: { documentElement: { scrollWidth: number; clientWidth: number } };
  navigator: { clipboard: { readText(): Promise<string> } };
};

export function clientIdOf(page: Page): Promise<string> {
  return page.evaluate(() => (globalThis as unknown as PageGlobals).__webmux!.clientId);
}

/** What xterm has selected (find selects its match). */
export function selectionOf(page: Page): Promise<string> {
  return page.evaluate(() => (globalThis as unknown as PageGlobals).__webmux?.terminal?.selection() ?? "");
}

/** bash without rc files and with a fixed prompt: the same screen on every machine. */
export const BASH = ["/usr/bin/bash", "--norc", "--noprofile", "-i"];
export const PROMPT = "$ ";


export async function createSession(server: WebmuxServer, body: Record<string, unknown> = {}): Promise<SessionInfo> {
  const response = await server.api("/api/sessions", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ command: BASH, env: { PS1: PROMPT, TERM: "xterm-256color" }, ...body }),
  });
  expect(response.status, await response.clone().text()).toBe(201);
  return (await response.json()) as SessionInfo;
}

/** A session running `node -e <script>`: test programs that need raw input or exact timing. */
export function createNodeSession(server: WebmuxServer, script: string, body: Record<string, unknown> = {}): Promise<SessionInfo> {
  return createSession(server, { command: [process.execPath, "-e", script], ...body });
}

/** Logs the whole context in (the cookie is shared by its pages). */
export async function logIn(context: BrowserContext, server: WebmuxServer): Promise<void> {
  const response = await context.request.post(server.url + "/api/login", { data: { token: server.token } });
  expect(response.ok()).toBe(true);
}

/** Opens the terminal page of a session and waits until its stream is live. */
export async function openTerminal(page: Page, server: WebmuxServer, sessionId: string): Promise<void> {
  await page.goto(`${server.url}/s/${sessionId}`);
  await waitForPhase(page, "live");
}

/**
 * How long a terminal may make no progress at all (no phase change, no byte received, rendered or
 * saved) before a wait on it fails. Waits without an explicit timeout are bounded by this stall, not
 * by their total length: on a busy machine a replay of megabytes takes many seconds while it
 * visibly advances, and what must fail is a terminal that stopped moving (the test's own timeout
 * still bounds the whole).
 */
export const STALL_MS = 5_000;
/** When a wait looks at the page again: soon at first, then at most once a second (as expect.poll does). */
const POLL_INTERVALS_MS = [100, 250, 500, 1000];

/** What a wait sees of the page in one look: the debug hook's figures and, when asked, the text. */
type TerminalLook = { stats: Stats | null; text: string };

async function look(page: Page, withText: boolean): Promise<TerminalLook> {
  try {
    return await page.evaluate((withText) => {
      const terminal = (globalThis as unknown as PageGlobals).__webmux?.terminal;
      return { stats: terminal?.stats() ?? null, text: withText ? (terminal?.text() ?? "") : "" };
    }, withText);
  } catch {
    return { stats: null, text: "" }; // the page is navigating: nothing to see yet
  }
}

/** The figures that move while a terminal makes progress. */
function progressMark(stats: Stats | null): string {
  if (stats === null) return "none";
  const { phase, opens, bytesReceived, offset, renderedOffset, savedOffset } = stats;
  return JSON.stringify({ phase, opens, bytesReceived, offset, renderedOffset, savedOffset });
}

/**
 * Waits until `done` holds for what the page shows, failing only once the terminal has made no
 * progress for STALL_MS (see there).
 */
export async function waitForTerminal(page: Page, done: (look: TerminalLook) => boolean, message: string, { withText = false } = {}): Promise<void> {
  let mark = "";
  let movedAt = Date.now();
  for (let attempt = 0; ; attempt++) {
    const seen = await look(page, withText);
    if (done(seen)) return;
    const now = progressMark(seen.stats);
    if (now !== mark) {
      mark = now;
      movedAt = Date.now();
    } else if (Date.now() - movedAt > STALL_MS) {
      throw new Error(`${message}: the terminal made no progress for ${STALL_MS} ms (${now})`);
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_INTERVALS_MS[Math.min(attempt, POLL_INTERVALS_MS.length - 1)]));
  }
}

/** Waits for the terminal's phase; with `timeout`, within that time, else while it makes progress. */
export async function waitForPhase(page: Page, phase: string, timeout?: number): Promise<void> {
  if (timeout !== undefined) {
    await expect.poll(() => stats(page).then((s) => s?.phase ?? null), { message: `terminal phase ${phase}`, timeout }).toBe(phase);
    return;
  }
  await waitForTerminal(page, ({ stats }) => stats?.phase === phase, `terminal phase ${phase}`);
}

export function stats(page: Page): Promise<Stats | null> {
  return page.evaluate(() => (globalThis as unknown as PageGlobals).__webmux?.terminal?.stats() ?? null);
}

/** The whole active buffer, one string per row, trailing blanks trimmed. */
export async function terminalLines(page: Page): Promise<string[]> {
  const text = await page.evaluate(() => (globalThis as unknown as PageGlobals).__webmux?.terminal?.text() ?? "");
  return text.split("\n");
}

/** What the terminal shows cell by cell, history, cursor and modes included (server/vt/screen-cells.ts). */
export function terminalCells(page: Page): Promise<string[]> {
  return page.evaluate(() => (globalThis as unknown as PageGlobals).__webmux?.terminal?.cells() ?? []);
}

export async function terminalText(page: Page): Promise<string> {
  return (await terminalLines(page)).join("\n");
}

/** Waits until the terminal shows `pattern` (anywhere in the buffer); with `timeout`, within that time, else while it makes progress. */
export async function waitForText(page: Page, pattern: string | RegExp, timeout?: number): Promise<void> {
  const test = typeof pattern === "string" ? (t: string) => t.includes(pattern) : (t: string) => pattern.test(t);
  if (timeout !== undefined) {
    await expect.poll(async () => test(await terminalText(page)), { message: `terminal shows ${pattern}`, timeout }).toBe(true);
    return;
  }
  await waitForTerminal(page, ({ text }) => test(text), `terminal shows ${pattern}`, { withText: true });
}

/** Types into the focused terminal as a user would (key events through xterm's textarea). */
export async function typeInTerminal(page: Page, text: string): Promise<void> {
  await page.locator(".term-host .xterm-helper-textarea").focus();
  await page.keyboard.type(text);
}

export async function pressInTerminal(page: Page, key: string): Promise<void> {
  await page.locator(".term-host .xterm-helper-textarea").focus();
  await page.keyboard.press(key);
}

/** Counts the terminal stream's frames in each direction, by opcode. */
export type FrameLog = {
  received: { opcode: number; bytes: number; payload: Buffer }[];
  sent: { opcode: number; payload: Buffer }[];
  receivedBytes(): number;
};

export function recordTerminalFrames(page: Page): FrameLog {
  const log: FrameLog = {
    received: [],
    sent: [],
    receivedBytes: () => log.received.reduce((sum, f) => sum + f.bytes, 0),
  };
  page.on("websocket", (ws: PwWebSocket) => {
    if (!/\/ws\/s\//.test(ws.url())) return;
    ws.on("framereceived", ({ payload }) => {
      const bytes = typeof payload === "string" ? Buffer.from(payload) : payload;
      log.received.push({ opcode: bytes[0] ?? -1, bytes: bytes.length, payload: bytes });
    });
    ws.on("framesent", ({ payload }) => {
      const bytes = typeof payload === "string" ? Buffer.from(payload) : payload;
      log.sent.push({ opcode: bytes[0] ?? -1, payload: bytes });
    });
  });
  return log;
}

/** What the specs read of the page's service worker (the e2e type check has no DOM library). */
type ServiceWorkerGlobals = { navigator: { serviceWorker: { ready: Promise<unknown>; controller: unknown } } };

/** The service worker is active and controls the page, so a reload while offline still gets the app shell. */
export async function waitForServiceWorker(page: Page): Promise<void> {
  await page.evaluate(() => (globalThis as unknown as ServiceWorkerGlobals).navigator.serviceWorker.ready);
  await expect
    .poll(() => page.evaluate(() => (globalThis as unknown as ServiceWorkerGlobals).navigator.serviceWorker.controller !== null))
    .toBe(true);
}
