/**
 * The snapshot figures (docs/design.md § Snapshots, § Performance): for a session that printed
 * 4 MiB of realistic output — coloured log lines, progress bars redrawn with `\r`, full-screen TUI
 * frames on the alternate screen — the size of the reset a fresh tab receives and its time from
 * navigation to the first painted screen in Debian's Chromium, for
 * - an untruncated reset made as a snapshot (what the policy sends after a resize: the session was
 *   resized by one column and back once its output was done, so its screen is the raw one's), and
 * - a truncated reset (a server whose ring is smaller than the output),
 * each next to the raw replay `[0, end)` of the same bytes (a twin session, never resized, in a
 * ring that holds it all: what a fresh tab got before snapshots, and still gets when nothing was
 * resized). The three arms rotate their order every round; medians (and paired ratios) are
 * reported. Every arm must end on the same screen as the raw replay, or its figure is invalid.
 *
 * "First painted" is the client's mark (TerminalViewStats.firstPaintMs), as in paint-time.ts.
 */
import type { Browser, Page } from "@playwright/test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { PARSE_BUDGET_BYTES_PER_SEC } from "../server/session/headless-screen.ts";
import { DEFAULT_BUFFER_BYTES } from "../server/session/ring-buffer.ts";
import { browserBenchMissing, launchChromium } from "./chromium-launch.ts";
import { figure, type BenchContext, type BenchResult } from "./report.ts";
import { startServerProcess, type ServerProcess } from "./server-process.ts";
import { median, MIB, pairedRatio, round } from "./stats.ts";
import { TerminalClient } from "./terminal-client.ts";
import { waitUntil } from "./wait.ts";

const ROUNDS = 5;
const QUICK_ROUNDS = 3;
/** Output (as the PTY prints it, CR LF per line) that leaves the default 4 MiB ring just untruncated. */
const OUTPUT_SLACK_BYTES = 64 * 1024;
/** The truncated arm's ring: a quarter of the output. */
const TRUNCATED_RING_BYTES = 1 * MIB;
/**
 * The program prints at a third of the mirror's parse budget, so the headless screen parses every
 * byte (a flood past the budget is skimmed and the snapshot would be of a screen that lost output).
 */
const PACE_BYTES_PER_SEC = PARSE_BUDGET_BYTES_PER_SEC / 3;
/** The program's write size; its pause between writes follows from the pace. */
const CHUNK_BYTES = 32 * 1024;
/** The programs' last line: the screen is complete once it shows. */
const END_MARKER = "END-OF-OUTPUT";
/** `\n<marker>\n` through the PTY (CR LF each). */
const TAIL_PTY_BYTES = 2 + END_MARKER.length + 2;
/** Printing 4 MiB at the pace takes ~2 s; a replay on a busy 2-core machine can take seconds. */
const STEP_TIMEOUT_MS = 60_000;
/** Polling the page for its paint mark: fine enough next to replays of hundreds of ms. */
const PAGE_POLL_MS = 25;
/** Log lines between two progress bars, and between two full-screen TUI episodes. */
const LINES_PER_PROGRESS = 150;
const LINES_PER_TUI = 900;
/** Redraws of a progress bar, and frames of a TUI episode. */
const PROGRESS_STEPS = 25;
const TUI_FRAMES = 6;

/** Opcodes of the server frames counted (docs/protocol.md). */
const SNAPSHOT_FRAME = 0x01;
const POSITION_FRAME = 0x04;

type PaintStats = { firstPaintMs: number | null; bytesReceived: number; phase: string; cols: number; rows: number };
type DebugGlobals = { __webmux?: { terminal: { stats(): PaintStats; text(): string } | null } };

type Sample = {
  ms: number;
  /** payload of the reset's 0x01 frames: the snapshot, or the raw bytes */
  snapshotBytes: number;
  bytesReceived: number;
  position: { mode: string; start: number; end: number; truncated: boolean } | null;
  /** the painted screen, row by row */
  screen: string[];
  /** ms from just before navigation (taken here, beside the page) to the position frame and to the reset's last 0x01 frame */
  positionAtMs: number | null;
  resetReceivedAtMs: number | null;
};

type Arm = { name: "raw" | "untruncated" | "truncated" | "floor"; server: ServerProcess; sessionId: string };

/** A deterministic generator (LCG): the same output in every session and run. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const WORDS = "request served cache miss retry upstream timeout worker queue flushed compiled bundle chunk module resolved socket closed opened token refreshed user session query rows index scan commit rollback".split(" ");
const LEVELS = [
  ["INFO ", "\x1b[32m"],
  ["DEBUG", "\x1b[34m"],
  ["WARN ", "\x1b[33m"],
  ["ERROR", "\x1b[1;31m"],
] as const;

/**
 * About `ptyBytes` of output as the PTY prints it (each LF as CR LF), for a `cols`×`rows`
 * terminal: coloured log lines (some longer than a row), progress bars redrawn in place, and
 * full-screen frames on the alternate screen with a box in DEC line drawing and a status bar.
 */
export function mixedOutput(ptyBytes: number, cols: number, rows: number): Buffer {
  const next = random(16);
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!;
  const parts: string[] = [];
  let size = 0;
  const push = (text: string) => {
    parts.push(text);
    for (let i = 0; i < text.length; i++) size += text.charCodeAt(i) === 0x0a ? 2 : 1;
  };
  let line = 0;
  let tui = 0;
  for (;;) {
    const seconds = String(line % 60).padStart(2, "0");
    const [level, colour] = pick(LEVELS);
    const words = Array.from({ length: 4 + Math.floor(next() * (next() < 0.1 ? 40 : 14)) }, () => pick(WORDS)).join(" ");
    const extra = next() < 0.05 ? ` \x1b[38;5;${Math.floor(next() * 256)}mtag\x1b[0m \x1b[38;2;200;120;40mrgb\x1b[0m` : "";
    const entry = `\x1b[2m2026-12-03T07:${String(Math.floor(line / 60) % 60).padStart(2, "0")}:${seconds}.${String(line % 1000).padStart(3, "0")}Z\x1b[0m ${colour}${level}\x1b[0m \x1b[36m[worker-${line % 8}]\x1b[0m ${words}${extra}\n`;
    if (size + entry.length + 2 > ptyBytes) break;
    push(entry);
    line += 1;
    if (line % LINES_PER_PROGRESS === 0) {
      let bar = "";
      for (let step = 1; step <= PROGRESS_STEPS; step++) {
        const done = Math.round((step / PROGRESS_STEPS) * 30);
        bar += `\r\x1b[2K\x1b[1mbuilding\x1b[0m [\x1b[42m${" ".repeat(done)}\x1b[0m${" ".repeat(30 - done)}] ${Math.round((step / PROGRESS_STEPS) * 100)}%`;
      }
      push(`${bar}\n`);
    }
    if (line % LINES_PER_TUI === 0) {
      tui += 1;
      let frames = "\x1b[?1049h\x1b[?25l";
      for (let frame = 0; frame < TUI_FRAMES; frame++) {
        frames += `\x1b[H\x1b(0\x1b[1;1Hl${"q".repeat(cols - 2)}k`;
        for (let row = 2; row < rows - 1; row++) {
          const cpu = Math.floor(next() * 100);
          frames += `\x1b[${row};1Hx\x1b(B \x1b[33m${String(1000 + row).padEnd(6)}\x1b[0m ${cpu > 80 ? "\x1b[31m" : "\x1b[32m"}${String(cpu).padStart(3)}%\x1b[0m ${pick(WORDS)}\x1b[K\x1b[${row};${cols}H\x1b(0x`;
        }
        frames += `\x1b[${rows - 1};1Hm${"q".repeat(cols - 2)}j\x1b(B`;
        frames += `\x1b[${rows};1H\x1b[7m top ${tui}.${frame} \x1b[K\x1b[0m`;
      }
      push(`${frames}\x1b[?25h\x1b[?1049l`);
    }
  }
  return Buffer.from(parts.join(""), "latin1");
}

/** The session's program: prints `file` at PACE_BYTES_PER_SEC, then the end marker, then idles. */
function pacedPrinter(file: string): string[] {
  const intervalMs = Math.round((CHUNK_BYTES / PACE_BYTES_PER_SEC) * 1000);
  const script = `
const data = require("fs").readFileSync(process.argv[1]);
let at = 0;
const tick = () => {
  if (at >= data.length) {
    process.stdout.write("\\n${END_MARKER}\\n");
    setInterval(() => {}, 1 << 30);
    return;
  }
  const chunk = data.subarray(at, at + ${CHUNK_BYTES});
  at += chunk.length;
  if (process.stdout.write(chunk)) setTimeout(tick, ${intervalMs});
  else process.stdout.once("drain", () => setTimeout(tick, ${intervalMs}));
};
tick();
`;
  return [process.execPath, "-e", script, file];
}

async function pageStats(page: Page): Promise<PaintStats | null> {
  return page.evaluate(() => (globalThis as unknown as DebugGlobals).__webmux?.terminal?.stats() ?? null);
}

async function screenOf(page: Page): Promise<string[]> {
  const text = await page.evaluate(() => (globalThis as unknown as DebugGlobals).__webmux?.terminal?.text() ?? "");
  const { rows } = (await pageStats(page))!;
  return text.split("\n").slice(-rows);
}

async function loggedInPage(browser: Browser, server: ServerProcess) {
  const context = await browser.newContext();
  const response = await context.request.post(`${server.url}/api/login`, { data: { token: server.token } });
  if (!response.ok()) throw new Error(`login: ${response.status()}`);
  return { context, page: await context.newPage() };
}

/** A fresh tab on the arm's session: its paint mark, what its reset carried, and the screen it shows. */
async function freshTab(browser: Browser, arm: Arm): Promise<Sample> {
  const { context, page } = await loggedInPage(browser, arm.server);
  let snapshotBytes = 0;
  let position: Sample["position"] = null;
  let positionAtMs: number | null = null;
  let resetReceivedAtMs: number | null = null;
  let started = 0;
  page.on("websocket", (ws) => {
    if (!/\/ws\/s\//.test(ws.url())) return;
    ws.on("framereceived", ({ payload }) => {
      const bytes = typeof payload === "string" ? Buffer.from(payload) : payload;
      if (bytes[0] === SNAPSHOT_FRAME) {
        snapshotBytes += bytes.length - 1;
        resetReceivedAtMs = performance.now() - started;
      } else if (bytes[0] === POSITION_FRAME && position === null) {
        position = JSON.parse(bytes.subarray(1).toString()) as Sample["position"];
        positionAtMs = performance.now() - started;
      }
    });
  });
  try {
    started = performance.now();
    await page.goto(`${arm.server.url}/s/${arm.sessionId}`);
    let last: PaintStats | null = null;
    await waitUntil(
      async () => {
        last = await pageStats(page);
        if (last?.firstPaintMs == null || last.phase !== "live") return false;
        return page.evaluate((marker) => (globalThis as unknown as DebugGlobals).__webmux?.terminal?.text().includes(marker) ?? false, END_MARKER);
      },
      { timeoutMs: STEP_TIMEOUT_MS, intervalMs: PAGE_POLL_MS, what: `${arm.name}: fresh tab painted` },
    );
    const stats = last as PaintStats | null;
    return { ms: stats!.firstPaintMs!, snapshotBytes, bytesReceived: stats!.bytesReceived, position, screen: await screenOf(page), positionAtMs, resetReceivedAtMs };
  } finally {
    await context.close();
  }
}

/** The grid a fresh tab fits (the sessions are made at it, so no tab resizes them). */
async function pageGrid(browser: Browser, server: ServerProcess): Promise<{ cols: number; rows: number }> {
  const probe = await server.createSession({ command: ["/bin/bash", "--norc", "--noprofile", "-c", `printf '${END_MARKER}\\n'; exec sleep 100000`] });
  const { context, page } = await loggedInPage(browser, server);
  try {
    await page.goto(`${server.url}/s/${probe.id}`);
    await waitUntil(async () => (await pageStats(page))?.phase === "live", { timeoutMs: STEP_TIMEOUT_MS, intervalMs: PAGE_POLL_MS, what: "probe tab live" });
    const { cols, rows } = (await pageStats(page))!;
    return { cols, rows };
  } finally {
    await context.close();
    await server.deleteSession(probe.id);
  }
}

async function printed(server: ServerProcess, id: string, ptyBytes: number): Promise<number> {
  let end = 0;
  await waitUntil(
    async () => {
      end = (await server.buffer(id)).end;
      return end >= ptyBytes;
    },
    { timeoutMs: STEP_TIMEOUT_MS, intervalMs: 200, what: "program printed its output" },
  );
  return end;
}

async function sessionCols(server: ServerProcess, id: string): Promise<number> {
  const response = await server.api(`/api/sessions/${id}`);
  return ((await response.json()) as { cols: number }).cols;
}

/** Resizes the session by one column and back, as a controller would: from now on its resets are snapshots. */
async function resizeAndBack(server: ServerProcess, id: string, grid: { cols: number; rows: number }): Promise<void> {
  const client = await TerminalClient.connect({ url: server.url, token: server.token, sessionId: id, client: "bench-resizer" });
  try {
    await client.until(() => client.statusFrames > 0, STEP_TIMEOUT_MS, "resizer attached");
    for (const cols of [grid.cols - 1, grid.cols]) {
      client.resize(cols, grid.rows);
      await waitUntil(async () => (await sessionCols(server, id)) === cols, { timeoutMs: STEP_TIMEOUT_MS, what: `session resized to ${cols} columns` });
    }
  } finally {
    await client.close();
  }
}

export async function benchSnapshotSize(ctx: BenchContext): Promise<BenchResult> {
  const missing = browserBenchMissing();
  if (missing) return { skipped: missing };
  const rounds = ctx.quick ? QUICK_ROUNDS : ROUNDS;
  const dir = mkdtempSync(join(tmpdir(), "webmux-snapshot-size-"));
  const full = await startServerProcess({ cpuProfileDir: ctx.cpuProfileDir });
  const small = await startServerProcess({ cpuProfileDir: ctx.cpuProfileDir, bufferBytes: TRUNCATED_RING_BYTES });
  const browser = await launchChromium();
  try {
    const grid = await pageGrid(browser, full);
    const output = mixedOutput(DEFAULT_BUFFER_BYTES - OUTPUT_SLACK_BYTES - TAIL_PTY_BYTES, grid.cols, grid.rows);
    const file = join(dir, "output.bin");
    writeFileSync(file, output);
    let ptyBytes = TAIL_PTY_BYTES;
    for (const byte of output) ptyBytes += byte === 0x0a ? 2 : 1;
    ctx.log(`snapshot-size: ${round(ptyBytes / MIB, 2)} MiB of output at ${grid.cols}×${grid.rows}, printed at ${round(PACE_BYTES_PER_SEC / MIB, 1)} MiB/s`);

    // One session at a time, so each mirror parses its output at the pace.
    const make = async (server: ServerProcess) => {
      const session = await server.createSession({ command: pacedPrinter(file), cols: grid.cols, rows: grid.rows });
      const end = await printed(server, session.id, ptyBytes);
      return { id: session.id, end };
    };
    const raw = await make(full);
    const untruncated = await make(full);
    await resizeAndBack(full, untruncated.id, grid);
    const truncated = await make(small);
    const floor = await full.createSession({ command: ["/bin/bash", "--norc", "--noprofile", "-c", `printf '\\n${END_MARKER}\\n'; exec sleep 100000`], cols: grid.cols, rows: grid.rows });
    await printed(full, floor.id, TAIL_PTY_BYTES);
    const arms: Arm[] = [
      { name: "floor", server: full, sessionId: floor.id },
      { name: "raw", server: full, sessionId: raw.id },
      { name: "untruncated", server: full, sessionId: untruncated.id },
      { name: "truncated", server: small, sessionId: truncated.id },
    ];
    const samples: Record<Arm["name"], Sample[]> = { raw: [], untruncated: [], truncated: [], floor: [] };
    for (let i = 0; i < rounds; i++) {
      const order = arms.map((_, k) => arms[(k + i) % arms.length]!);
      for (const arm of order) samples[arm.name].push(await freshTab(browser, arm));
      const last = (name: Arm["name"]) => `${round(samples[name].at(-1)!.ms, 0)} ms / ${round(samples[name].at(-1)!.snapshotBytes / 1024, 0)} KiB`;
      ctx.log(`snapshot-size ${i + 1}/${rounds} (${order.map((a) => a.name).join(", ")}): raw ${last("raw")}; untruncated snapshot ${last("untruncated")}; truncated snapshot ${last("truncated")}; one-line session ${last("floor")}`);
    }

    // Each arm must be what it claims, and show what the raw replay shows.
    const rawScreen = samples.raw[0]!.screen;
    const sameScreen = (s: Sample) => s.screen.join("\n") === rawScreen.join("\n");
    const rawValid = samples.raw.every((s) => s.position?.mode === "reset" && !s.position.truncated && s.snapshotBytes === raw.end && sameScreen(s));
    const untruncatedValid = samples.untruncated.every((s) => s.position?.mode === "reset" && !s.position.truncated && s.snapshotBytes < untruncated.end && sameScreen(s));
    const truncatedValid = samples.truncated.every((s) => s.position?.mode === "reset" && s.position.truncated && sameScreen(s));
    const ms = (name: Arm["name"]) => samples[name].map((s) => s.ms);
    const kib = (name: Arm["name"]) => round(median(samples[name].map((s) => s.snapshotBytes)) / 1024, 1);
    const armDetail = (name: Arm["name"]) => ({
      ms: ms(name).map((v) => round(v, 1)),
      snapshotBytes: samples[name].map((s) => s.snapshotBytes),
      bytesReceived: samples[name].map((s) => s.bytesReceived),
      positionAtMs: samples[name].map((s) => (s.positionAtMs === null ? null : round(s.positionAtMs, 1))),
      resetReceivedAtMs: samples[name].map((s) => (s.resetReceivedAtMs === null ? null : round(s.resetReceivedAtMs, 1))),
    });
    const detail = {
      outputBytes: ptyBytes,
      grid,
      rounds,
      truncatedRingBytes: TRUNCATED_RING_BYTES,
      paceBytesPerSec: PACE_BYTES_PER_SEC,
      raw: armDetail("raw"),
      untruncated: armDetail("untruncated"),
      truncated: armDetail("truncated"),
      oneLineSession: armDetail("floor"),
      screensMatchRaw: { untruncated: samples.untruncated.every(sameScreen), truncated: samples.truncated.every(sameScreen) },
      note: "snapshotBytes: payload of the reset's 0x01 frames (uncompressed); ms: performance.now() at the first render of the complete screen (origin: navigation start); positionAtMs/resetReceivedAtMs: seen by Playwright from just before navigation (the server made the snapshot between the two, the page parses it after); oneLineSession: the app's own start-up and attach, the floor every screen pays; arms rotate their order every round",
    };
    const msOf = (name: Arm["name"]) => round(median(ms(name)), 1);
    const rawLabel = `raw replay [0, end) of the same ${round(ptyBytes / MIB, 2)} MiB`;
    return [
      figure({
        id: "snapshot.untruncated.size",
        label: "Reset size, untruncated ring, snapshot (as sent after a resize)",
        unit: "KiB",
        value: kib("untruncated"),
        baseline: kib("raw"),
        baselineLabel: rawLabel,
        valid: rawValid && untruncatedValid,
        detail,
      }),
      figure({
        id: "snapshot.untruncated.paint",
        label: `Navigation → first painted screen, untruncated ring, snapshot (median of ${rounds})`,
        unit: "ms",
        value: msOf("untruncated"),
        baseline: msOf("raw"),
        baselineLabel: rawLabel,
        ratio: round(pairedRatio(ms("untruncated"), ms("raw")), 3),
        valid: rawValid && untruncatedValid,
      }),
      figure({
        id: "snapshot.truncated.size",
        label: `Reset size, truncated ring (${round(TRUNCATED_RING_BYTES / MIB, 0)} MiB), snapshot`,
        unit: "KiB",
        value: kib("truncated"),
        baseline: kib("raw"),
        baselineLabel: rawLabel,
        valid: rawValid && truncatedValid,
      }),
      figure({
        id: "snapshot.truncated.paint",
        label: `Navigation → first painted screen, truncated ring, snapshot (median of ${rounds})`,
        unit: "ms",
        value: msOf("truncated"),
        baseline: msOf("raw"),
        baselineLabel: rawLabel,
        ratio: round(pairedRatio(ms("truncated"), ms("raw")), 3),
        goal: { on: "ratio", op: "<=", target: 1, source: "chosen: a snapshot paints no later than the raw replay of the output it stands for" },
        valid: rawValid && truncatedValid,
      }),
    ];
  } finally {
    await browser.close();
    await full.stop();
    await small.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
