/**
 * The paint-time figure (docs/design.md § Performance):
 * time from navigation to the first painted screen for a session whose 4 MiB
 * ring is full, and for a reload that paints the IndexedDB copy — Debian's Chromium (through
 * Playwright) against a webmux server process, real bash, the built client in dist/client.
 *
 * Each figure stands next to a baseline measured in the same run, under the same cache state:
 * - full ring, fresh tab (cold HTTP cache, no local copy: the raw ring is the reset snapshot, the
 *   worst case) vs a fresh tab on a session that printed one line: the app's own start-up and
 *   attach, the floor any screen pays;
 * - reload with the IndexedDB copy (the screen painted locally, then `append` with nothing
 *   missing) vs a reload of the same tab with the copy deleted (a full replay again, warm cache).
 * The arms alternate in every round, so both see the same machine; the median is reported.
 *
 * "First painted" is the client's own mark (TerminalViewStats.firstPaintMs): performance.now(),
 * whose origin is the navigation's start, at xterm's first render after the whole screen (copy or
 * replay) was parsed.
 */
import type { Browser, BrowserContext, Page } from "@playwright/test";
import { readFileSync } from "node:fs";
import { DEFAULT_BUFFER_BYTES } from "../server/session/ring-buffer.ts";
import { ensureCorpus } from "./corpus.ts";
import { browserBenchMissing, launchChromium } from "./chromium-launch.ts";
import { figure, type BenchContext, type BenchResult } from "./report.ts";
import { startServerProcess, type ServerProcess } from "./server-process.ts";
import { median, round } from "./stats.ts";
import { waitUntil } from "./wait.ts";

const ROUNDS = 5;
const QUICK_ROUNDS = 3;
/**
 * The big session prints real source (bench/corpus.ts), so xterm parses lines the way it does a
 * build log: as much of it as fills the default ring, with the PTY's CR per line and the end
 * marker, to within this many bytes — untruncated, so the replay is the whole 4 MiB.
 */
const FULL_RING_SLACK_BYTES = 1024;
/** The last line of both programs: the screen is complete once it shows. */
const END_MARKER = "END-OF-OUTPUT";
/** What the programs print after their text: `printf '\n<marker>\n'` through the PTY (CR LF each). */
const TAIL_PTY_BYTES = 2 + END_MARKER.length + 2;
/**
 * A reload that paints its local copy receives only framing: control, position and status frames
 * (a status frame is SessionInfo JSON, a few hundred bytes). More means it replayed.
 */
const RELOAD_MAX_BYTES = 4_096;
/** A 4 MiB replay on a busy 2-core machine can take seconds; this bounds a wedge, it does not race. */
const STEP_TIMEOUT_MS = 60_000;
/** Polling the page for its paint mark: fine enough next to replays of hundreds of ms. */
const PAGE_POLL_MS = 50;
/** The client's IndexedDB copy (client/src/storage/screen-store.ts). */
const SCREEN_DATABASE = "webmux-screens";
const SCREEN_STORE = "screens";

/** What the page's `window.__webmux.terminal.stats()` (client/src/terminal/debug-hook.ts) gives. */
type PaintStats = {
  firstPaintMs: number | null;
  restoredLocally: boolean;
  bytesReceived: number;
  savedOffset: number | null;
  offset: number;
  phase: string;
};
type DebugGlobals = { __webmux?: { terminal: { stats(): PaintStats; text(): string } | null } };

type Paint = { ms: number; bytesReceived: number; restoredLocally: boolean };

async function pageStats(page: Page): Promise<PaintStats | null> {
  return page.evaluate(() => (globalThis as unknown as DebugGlobals).__webmux?.terminal?.stats() ?? null);
}

/** Waits until the page painted a complete screen showing the end marker; its paint mark. */
async function painted(page: Page, what: string): Promise<Paint> {
  let last: PaintStats | null = null;
  await waitUntil(
    async () => {
      last = await pageStats(page);
      if (last?.firstPaintMs == null || last.phase !== "live") return false;
      return page.evaluate((marker) => (globalThis as unknown as DebugGlobals).__webmux?.terminal?.text().includes(marker) ?? false, END_MARKER);
    },
    { timeoutMs: STEP_TIMEOUT_MS, intervalMs: PAGE_POLL_MS, what },
  );
  const stats = last as PaintStats | null;
  return { ms: stats!.firstPaintMs!, bytesReceived: stats!.bytesReceived, restoredLocally: stats!.restoredLocally };
}

async function loggedInContext(browser: Browser, server: ServerProcess): Promise<BrowserContext> {
  const context = await browser.newContext();
  const response = await context.request.post(`${server.url}/api/login`, { data: { token: server.token } });
  if (!response.ok()) throw new Error(`login: ${response.status()}`);
  return context;
}

/** Until the page's IndexedDB copy holds the stream's end, so a reload can paint it. */
async function copySaved(page: Page, end: number): Promise<void> {
  await waitUntil(async () => (await pageStats(page))?.savedOffset === end, { timeoutMs: STEP_TIMEOUT_MS, intervalMs: PAGE_POLL_MS, what: "local copy saved" });
}

async function deleteCopy(page: Page, sessionId: string): Promise<void> {
  await page.evaluate(
    ({ database, store, key }) =>
      new Promise<void>((resolve, reject) => {
        type Req = { result: { transaction(s: string, m: string): { objectStore(s: string): { delete(k: string): unknown }; oncomplete: () => void; onerror: () => void }; close(): void }; onsuccess: () => void; onerror: () => void };
        const open = (globalThis as unknown as { indexedDB: { open(name: string): Req } }).indexedDB.open(database);
        open.onerror = () => reject(new Error("open IndexedDB"));
        open.onsuccess = () => {
          const tx = open.result.transaction(store, "readwrite");
          tx.objectStore(store).delete(key);
          tx.oncomplete = () => {
            open.result.close();
            resolve();
          };
          tx.onerror = () => reject(new Error("delete the copy"));
        };
      }),
    { database: SCREEN_DATABASE, store: SCREEN_STORE, key: sessionId },
  );
}

/** How many bytes of `text` a PTY (onlcr: CR before each LF) turns into at most `budget` bytes. */
function bytesFitting(text: Uint8Array, budget: number): number {
  let pty = 0;
  for (let i = 0; i < text.length; i++) {
    pty += text[i] === 0x0a ? 2 : 1;
    if (pty > budget) return i;
  }
  return text.length;
}

/** The session's ring once its program printed the end marker. */
async function finishedRing(server: ServerProcess, id: string): Promise<{ end: number; truncated: boolean }> {
  const marker = Buffer.from(END_MARKER);
  let ring = await server.buffer(id, true);
  await waitUntil(
    async () => {
      ring = await server.buffer(id, true);
      return Buffer.from(ring.bytes).includes(marker);
    },
    { timeoutMs: STEP_TIMEOUT_MS, intervalMs: 200, what: "program printed its output" },
  );
  return { end: ring.end, truncated: ring.truncated };
}

/** The grid a tab gives a session it controls: a tab opened on `sessionId`, then the session's size. */
async function tabGrid(browser: Browser, server: ServerProcess, sessionId: string): Promise<{ cols: number; rows: number }> {
  const context = await loggedInContext(browser, server);
  try {
    const page = await context.newPage();
    await page.goto(`${server.url}/s/${sessionId}`);
    await painted(page, "tab sized its session");
    // Painted and live: the tab's resize (sent as it took control, before its replay) is applied.
    const res = await context.request.get(`${server.url}/api/sessions/${sessionId}`);
    if (!res.ok()) throw new Error(`session info: ${res.status()}`);
    const info = (await res.json()) as { cols: number; rows: number };
    return { cols: info.cols, rows: info.rows };
  } finally {
    await context.close();
  }
}

export async function benchPaintTime(ctx: BenchContext): Promise<BenchResult> {
  const missing = browserBenchMissing();
  if (missing) return { skipped: missing };
  const rounds = ctx.quick ? QUICK_ROUNDS : ROUNDS;
  const corpus = await ensureCorpus(DEFAULT_BUFFER_BYTES);
  const bigOutputBytes = bytesFitting(readFileSync(corpus.path), DEFAULT_BUFFER_BYTES - TAIL_PTY_BYTES - FULL_RING_SLACK_BYTES / 2);
  const server = await startServerProcess({ cpuProfileDir: ctx.cpuProfileDir });
  const browser = await launchChromium();
  try {
    const tail = `printf '\\n${END_MARKER}\\n'; exec sleep 100000`;
    const tiny = await server.createSession({ command: ["/bin/bash", "--norc", "--noprofile", "-c", tail] });
    const tinyRing = await finishedRing(server, tiny.id);
    // The big session is made at the grid a tab gives it: the first tab takes control and resizes
    // a session made at another size, and every reset after a resize is a made snapshot
    // (docs/protocol.md § Resume: append, reset, truncated), not the raw 4 MiB this figure is about.
    const grid = await tabGrid(browser, server, tiny.id);
    const big = await server.createSession({ command: ["/bin/bash", "--norc", "--noprofile", "-c", `head -c ${bigOutputBytes} "$0"; ${tail}`, corpus.path], ...grid });
    const ring = await finishedRing(server, big.id);
    const full = !ring.truncated && ring.end > DEFAULT_BUFFER_BYTES - FULL_RING_SLACK_BYTES && ring.end <= DEFAULT_BUFFER_BYTES;
    ctx.log(`paint-time: ring ${ring.end} B of ${DEFAULT_BUFFER_BYTES}${ring.truncated ? " (truncated)" : ""}`);

    const tinyFresh: Paint[] = [];
    const bigFresh: Paint[] = [];
    const reloadCopy: Paint[] = [];
    const reloadNoCopy: Paint[] = [];
    for (let i = 0; i < rounds; i++) {
      const floorContext = await loggedInContext(browser, server);
      const floorPage = await floorContext.newPage();
      await floorPage.goto(`${server.url}/s/${tiny.id}`);
      tinyFresh.push(await painted(floorPage, "tiny session painted"));
      await floorContext.close();

      const context = await loggedInContext(browser, server);
      const page = await context.newPage();
      await page.goto(`${server.url}/s/${big.id}`);
      bigFresh.push(await painted(page, "full ring painted"));
      await copySaved(page, ring.end);

      await page.reload();
      reloadCopy.push(await painted(page, "reload painted its copy"));

      await deleteCopy(page, big.id);
      await page.reload();
      reloadNoCopy.push(await painted(page, "reload without a copy painted"));
      await context.close();
      const ms = (p: Paint[]) => round(p.at(-1)!.ms, 0);
      ctx.log(`paint-time ${i + 1}/${rounds}: fresh tab full ring ${ms(bigFresh)} ms (tiny ${ms(tinyFresh)} ms); reload with copy ${ms(reloadCopy)} ms (without ${ms(reloadNoCopy)} ms)`);
    }

    // Each arm must have been what it claims: the copy painted and nothing replayed, or a real replay.
    const copyWorked = reloadCopy.every((p) => p.restoredLocally && p.bytesReceived <= RELOAD_MAX_BYTES);
    const replayed = [...bigFresh, ...reloadNoCopy].every((p) => !p.restoredLocally && p.bytesReceived >= ring.end);
    const samples = (paints: Paint[]) => ({ ms: paints.map((p) => round(p.ms, 1)), bytesReceived: paints.map((p) => p.bytesReceived) });
    const detail = {
      ringBytes: ring.end,
      ringCapacity: DEFAULT_BUFFER_BYTES,
      tinyRingBytes: tinyRing.end,
      rounds,
      fullRing: full,
      freshTabFullRing: samples(bigFresh),
      freshTabTinySession: samples(tinyFresh),
      reloadWithCopy: samples(reloadCopy),
      reloadWithoutCopy: samples(reloadNoCopy),
      note: "ms: performance.now() at the first render of the complete screen (origin: navigation start); bytesReceived: the terminal socket's payload bytes",
    };
    const msOf = (paints: Paint[]) => round(median(paints.map((p) => p.ms)), 1);
    return [
      figure({
        id: "paint.full-ring",
        label: `Navigation → first painted screen, full ${round(ring.end / 2 ** 20, 2)} MiB ring, fresh tab (median of ${rounds})`,
        unit: "ms",
        value: msOf(bigFresh),
        baseline: msOf(tinyFresh),
        baselineLabel: "one-line session",
        valid: full && replayed,
        detail,
      }),
      figure({
        id: "paint.reload-local-copy",
        label: `Navigation → first painted screen, reload with the IndexedDB copy (median of ${rounds})`,
        unit: "ms",
        value: msOf(reloadCopy),
        baseline: msOf(reloadNoCopy),
        baselineLabel: "reload, copy deleted",
        goal: { on: "ratio", op: "<=", target: 1, source: "chosen: the local copy must paint no later than the replay it saves" },
        valid: full && copyWorked && replayed,
      }),
    ];
  } finally {
    await browser.close();
    await server.stop();
  }
}
