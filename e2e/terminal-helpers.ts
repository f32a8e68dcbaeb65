/**
 * Helpers for the terminal specs: deterministic shells and programs, logging a browser context in,
 * and reading the terminal through the client's `window.__webmux` debug hook.
 */
import type { BrowserContext, Page, WebSocket as PwWebSocket } from "@playwright/test";
import type { SessionInfo } from "../server/contract/types.ts";
import { expect, type WebmuxServer } from "./fixtures.ts";

/**
 * The client's `window.__webmux` debug hook (client/src/terminal/debug-hook.ts), restated here so
 * the e2e type check does not pull in the client's DOM code.
 */
export type Stats = {
  bytesReceived: number;
  opens: number;
  waits: number;
  generation: string | null;
  offset: number;
  renderedOffset: number | null;
  savedOffset: number | null;
  firstPaintMs: number | null;
  restoredLocally: boolean;
  cols: number;
  rows: number;
  phase: string;
  controller: string | null;
};

/** The page globals the specs read, typed here because the e2e type check has no DOM library. */
export type PageGlobals = {
  __webmux?: {
    clientId: string;
    terminal: { sessionId: string; clientId: string; text(): string; selection(): string; stats(): Stats; drop(): void } | null;
  };
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

export async function waitForPhase(page: Page, phase: string, timeout?: number): Promise<void> {
  await expect.poll(() => stats(page).then((s) => s?.phase ?? null), { message: `terminal phase ${phase}`, timeout }).toBe(phase);
}

export function stats(page: Page): Promise<Stats | null> {
  return page.evaluate(() => (globalThis as unknown as PageGlobals).__webmux?.terminal?.stats() ?? null);
}

/** The whole active buffer, one string per row, trailing blanks trimmed. */
export async function terminalLines(page: Page): Promise<string[]> {
  const text = await page.evaluate(() => (globalThis as unknown as PageGlobals).__webmux?.terminal?.text() ?? "");
  return text.split("\n");
}

export async function terminalText(page: Page): Promise<string> {
  return (await terminalLines(page)).join("\n");
}

/** Waits until the terminal shows `pattern` (anywhere in the buffer). */
export async function waitForText(page: Page, pattern: string | RegExp, timeout?: number): Promise<void> {
  const test = typeof pattern === "string" ? (t: string) => t.includes(pattern) : (t: string) => pattern.test(t);
  await expect.poll(async () => test(await terminalText(page)), { message: `terminal shows ${pattern}`, timeout }).toBe(true);
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
