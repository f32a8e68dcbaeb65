import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import xtermHeadless from "@xterm/headless";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import {
  BATCH_BYTES,
  FLUSH_DELAY_MS,
  FLUSH_MAX_DELAY_MS,
  HeadlessScreen,
  MAX_BACKLOG_BYTES,
  PARSE_BURST_BYTES,
  SKIM_TAIL_BYTES,
  type HeadlessScreenOptions,
} from "./headless-screen.ts";
import { HEADLESS_WORKER_NICE, HeadlessWorkerHost, WORKER_LINGER_MS } from "./headless-worker-host.ts";

const { Terminal } = xtermHeadless;
const run = promisify(execFile);
const encoder = new TextEncoder();
const bytes = (text: string) => encoder.encode(text);
const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

/** Upper bound for any awaited condition in these tests. */
const CONDITION_DEADLINE_MS = 10_000;

async function waitFor(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + CONDITION_DEADLINE_MS;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const live: HeadlessScreen[] = [];
function screen(opts: Partial<HeadlessScreenOptions> = {}): HeadlessScreen {
  const created = new HeadlessScreen({ cols: 80, rows: 24, ...opts });
  live.push(created);
  return created;
}

// Each test starts without a worker: the worker ends with the last screen here, except where a test lingers it.
beforeAll(() => {
  HeadlessWorkerHost.lingerMs = 0;
});
afterAll(() => {
  HeadlessWorkerHost.lingerMs = WORKER_LINGER_MS;
});

afterEach(async () => {
  HeadlessWorkerHost.lingerMs = 0;
  for (const created of live.splice(0)) created.dispose();
  await waitFor(() => HeadlessScreen.workerCount() === 0, "the worker to exit after the test");
});

/** Every line of a terminal's active buffer (scrollback and screen), right-trimmed. */
function allLines(term: InstanceType<typeof Terminal>): string[] {
  const buffer = term.buffer.active;
  const lines: string[] = [];
  for (let y = 0; y < buffer.length; y++) lines.push(buffer.getLine(y)?.translateToString(true).trimEnd() ?? "");
  return lines;
}

function writeInto(term: InstanceType<typeof Terminal>, data: string | Uint8Array): Promise<void> {
  return new Promise((resolve) => term.write(data, resolve));
}

/** The nice value of each thread of this process (Linux: field 19 of /proc/self/task/<tid>/stat), by thread id. */
function threadNices(): Map<number, number> {
  const nices = new Map<number, number>();
  for (const tid of readdirSync("/proc/self/task")) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
      nices.set(Number(tid), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]));
    } catch {
      // the thread ended while we listed them
    }
  }
  return nices;
}

describe("HeadlessScreen", () => {
  it.runIf(existsSync("/proc/thread-self"))("parses in a worker thread at a lowered CPU priority, not the rest of the process", async () => {
    const ownTid = Number(readlinkSync("/proc/thread-self").split("/").pop());
    const lowered = () => [...threadNices()].filter(([, nice]) => nice === HEADLESS_WORKER_NICE).map(([tid]) => tid);
    expect(threadNices().get(ownTid)).not.toBe(HEADLESS_WORKER_NICE);
    expect(lowered()).toEqual([]);
    const s = screen();
    s.write(bytes("hi"));
    expect((await s.read()).lines[0]).toBe("hi");
    // The worker lowers itself before it handles the first message, so it has by the answer.
    expect(lowered()).toHaveLength(1);
    expect(lowered()[0]).not.toBe(ownTid);
    expect(threadNices().get(ownTid)).not.toBe(HEADLESS_WORKER_NICE);
    s.dispose();
    live.length = 0;
    await waitFor(() => HeadlessScreen.workerCount() === 0, "the worker to exit");
    await waitFor(() => lowered().length === 0, "the lowered thread to be gone");
  });

  it("shows what an echoing shell printed, with the cursor after the prompt", async () => {
    const s = screen();
    for (const chunk of ["$ ec", "ho hi", "\r\n", "hi\r\n", "$ "]) s.write(bytes(chunk));
    const read = await s.read();
    expect(read.lines.slice(0, 3)).toEqual(["$ echo hi", "hi", "$"]);
    expect(read.lines).toHaveLength(24);
    expect(read.cursor).toEqual({ row: 2, col: 2 });
    expect(read.scrollback).toEqual([]);
  });

  it("keeps a UTF-8 character intact when its bytes arrive in different writes", async () => {
    const s = screen();
    const wide = bytes("世");
    s.write(wide.subarray(0, 1));
    await s.preview(); // the lead byte reaches the worker in a message of its own
    s.write(wide.subarray(1, 3));
    // The next batch holds "\r\n" and filler up to one byte short of BATCH_BYTES, so the
    // following 世 straddles two batches.
    const filler = "a".repeat(BATCH_BYTES - 3);
    s.write(bytes(`\r\n${filler}`));
    s.write(bytes("世\r\n"));
    const read = await s.read({ scrollback: 10_000 });
    const all = [...read.scrollback, ...read.lines];
    expect(all[0]).toBe("世");
    expect(all).toContain(`${"a".repeat(filler.length % 80)}世`);
    expect(all.join("\n")).not.toContain("\uFFFD");
  });

  it("previews the last three non-empty lines, right-trimmed", async () => {
    const s = screen({ cols: 40, rows: 10 });
    s.write(bytes("one\r\ntwo\r\n\r\nthree   \r\n\r\nfour\r\n\r\n"));
    expect(await s.preview()).toEqual(["two", "three", "four"]);
  });

  it("returns the last N lines of a scrollback limited to its option", async () => {
    const s = screen({ cols: 80, rows: 24, scrollback: 10_000 });
    let text = "";
    for (let n = 1; n <= 20_000; n++) text += `line ${n}\r\n`;
    s.write(bytes(text));
    const read = await s.read({ scrollback: 50 });
    // 20 000 lines + the empty cursor row: the screen shows 19 978…20 000.
    expect(read.lines[0]).toBe("line 19978");
    expect(read.scrollback).toHaveLength(50);
    expect(read.scrollback[0]).toBe("line 19928");
    expect(read.scrollback.at(-1)).toBe("line 19977");
    const all = await s.read({ scrollback: 20_000 });
    expect(all.scrollback).toHaveLength(10_000);
    expect(all.scrollback[0]).toBe("line 9978");
  });

  it("reports the cursor a CUP sequence moved to, 0-based", async () => {
    const s = screen();
    s.write(bytes("hello\x1b[5;10H"));
    expect((await s.read()).cursor).toEqual({ row: 4, col: 9 });
  });

  it("serializes screen and scrollback so that a fresh terminal shows the same lines", async () => {
    const s = screen({ cols: 50, rows: 8 });
    let text = "";
    for (let n = 1; n <= 30; n++) text += `\x1b[3${n % 8}mrow ${n}\x1b[0m ${"·".repeat(n % 7)}\r\n`;
    s.write(bytes(`${text}$ ls 世界`));
    const snapshot = await s.serialize();
    const copy = new Terminal({ cols: 50, rows: 8, scrollback: 10_000, allowProposedApi: true });
    await writeInto(copy, snapshot);
    const read = await s.read({ scrollback: 10_000 });
    expect(allLines(copy)).toEqual([...read.scrollback, ...read.lines]);
    expect(copy.buffer.active.cursorX).toBe(read.cursor.col);
    copy.dispose();
  });

  it("serializes an alternate-screen app so that a fresh terminal shows its screen", async () => {
    const s = screen({ cols: 40, rows: 6 });
    s.write(bytes("$ vim notes.txt\r\n"));
    s.write(bytes("\x1b[?1049h\x1b[H\x1b[2J┌ notes ┐\r\n│ hello │\r\n└───────┘\x1b[6;1H-- INSERT --"));
    const snapshot = await s.serialize();
    const copy = new Terminal({ cols: 40, rows: 6, allowProposedApi: true });
    await writeInto(copy, snapshot);
    expect(copy.buffer.active.type).toBe("alternate");
    const read = await s.read();
    expect(read.lines[0]).toBe("┌ notes ┐");
    expect(read.lines[5]).toBe("-- INSERT --");
    expect(allLines(copy)).toEqual(read.lines);
    expect(copy.buffer.normal.getLine(0)?.translateToString(true)).toBe("$ vim notes.txt");
    copy.dispose();
  });

  it("wraps at the new width after resize", async () => {
    const s = screen({ cols: 80, rows: 10 });
    s.write(bytes(`${"x".repeat(60)}\r\n`));
    expect((await s.read()).lines[0]).toBe("x".repeat(60));
    s.resize(40, 10);
    s.write(bytes("y".repeat(50)));
    const lines = (await s.read()).lines;
    expect(lines.every((line) => line.length <= 40)).toBe(true);
    expect(lines.join("")).toContain(`${"y".repeat(40)}${"y".repeat(10)}`);
    expect(lines).toContain("y".repeat(10));
  });

  it("starts a blank terminal on reset (a new generation)", async () => {
    const s = screen();
    s.write(bytes("old generation\r\n"));
    s.reset();
    s.write(bytes("new"));
    const read = await s.read({ scrollback: 100 });
    expect(read.lines[0]).toBe("new");
    expect(read.lines.join("")).not.toContain("old");
    expect(read.scrollback).toEqual([]);
  });

  it("keeps two screens independent in one shared worker, which ends with the last screen", async () => {
    const a = screen({ cols: 30, rows: 5 });
    const b = screen({ cols: 30, rows: 5 });
    expect(HeadlessScreen.workerCount()).toBe(1);
    a.write(bytes("in a"));
    b.write(bytes("in b"));
    expect(await a.preview()).toEqual(["in a"]);
    expect(await b.preview()).toEqual(["in b"]);
    a.dispose();
    expect(await b.preview()).toEqual(["in b"]);
    expect(HeadlessScreen.workerCount()).toBe(1);
    b.dispose();
    await waitFor(() => HeadlessScreen.workerCount() === 0, "the worker to exit");
    // A later screen starts a new worker.
    const c = screen({ cols: 30, rows: 5 });
    c.write(bytes("in c"));
    expect(await c.preview()).toEqual(["in c"]);
    expect(HeadlessScreen.workerCount()).toBe(1);
  });

  it.runIf(existsSync("/proc/thread-self"))("keeps the worker a while after the last screen, for the next one, then ends it", async () => {
    HeadlessWorkerHost.lingerMs = 300;
    const lowered = () => [...threadNices()].filter(([, nice]) => nice === HEADLESS_WORKER_NICE).map(([tid]) => tid);
    const a = screen({ cols: 30, rows: 5 });
    a.write(bytes("in a"));
    expect(await a.preview()).toEqual(["in a"]);
    const [worker] = lowered();
    expect(worker).toBeDefined();
    a.dispose();
    expect(HeadlessScreen.workerCount()).toBe(1);
    // The next session's screen gets the same, warm thread.
    const b = screen({ cols: 30, rows: 5 });
    b.write(bytes("in b"));
    expect(await b.preview()).toEqual(["in b"]);
    expect(lowered()).toEqual([worker]);
    b.dispose();
    live.length = 0;
    await waitFor(() => HeadlessScreen.workerCount() === 0, "the lingering worker to exit");
    await waitFor(() => lowered().length === 0, "its thread to be gone");
  });

  it("rejects requests on a disposed screen with a stable code", async () => {
    const s = screen();
    const pending = s.read();
    s.dispose();
    await expect(pending).rejects.toMatchObject({ code: "HEADLESS_SCREEN_DISPOSED" });
    await expect(s.preview()).rejects.toMatchObject({ code: "HEADLESS_SCREEN_DISPOSED" });
  });

  it("posts a partial batch once output pauses, and output that never pauses at least every FLUSH_MAX_DELAY_MS", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    try {
      const s = screen();
      // Keys echoed back to back: the worker is not woken while they keep coming…
      const step = FLUSH_DELAY_MS / 2;
      let written = 0;
      for (let t = 0; t + step < FLUSH_MAX_DELAY_MS; t += step) {
        s.write(bytes("k"));
        written++;
        vi.advanceTimersByTime(step);
        expect(s.stats().postedBytes).toBe(0);
      }
      // …until the longest wait is reached, even though they still keep coming.
      s.write(bytes("k"));
      written++;
      vi.advanceTimersByTime(step);
      expect(s.stats()).toMatchObject({ postedBytes: written, pendingBytes: 0 });
      // A single echo after a pause is posted once the quiet has lasted FLUSH_DELAY_MS.
      s.write(bytes("!"));
      vi.advanceTimersByTime(FLUSH_DELAY_MS - 1);
      expect(s.stats().postedBytes).toBe(written);
      vi.advanceTimersByTime(1);
      expect(s.stats().postedBytes).toBe(written + 1);
      vi.useRealTimers();
      expect((await s.read()).lines[0]).toBe("k".repeat(written) + "!");
    } finally {
      vi.useRealTimers();
    }
  });

  it("tells listeners when the visible screen changed, until they unsubscribe", async () => {
    const s = screen();
    let kept = 0;
    let removed = 0;
    s.onChange(() => kept++);
    const unsubscribe = s.onChange(() => removed++);
    s.write(bytes("first"));
    await waitFor(() => kept === 1 && removed === 1, "the first change");
    unsubscribe();
    s.write(bytes(" second"));
    await waitFor(() => kept === 2, "the second change");
    expect(removed).toBe(1);
  });

  it("skims a flood past its parse budget: only the tail is parsed, and the screen shows how it ended", async () => {
    // The default burst, refilled so slowly that the time the flood takes to write (seconds on a
    // busy machine, each refilling the default rate's 6 MB) does not change what may be parsed.
    const s = screen({ parseBudget: { bytesPerSec: 16 * 1024, burstBytes: PARSE_BURST_BYTES } });
    const total = 32 * 1024 * 1024;
    const line = (n: number) => `flood line ${String(n).padStart(8, "0")} ${"x".repeat(40)}\r\n`;
    let written = 0;
    let n = 0;
    while (written < total) {
      let batch = "";
      for (let i = 0; i < 1000; i++) batch += line(n++);
      const b = bytes(batch);
      s.write(b);
      written += b.byteLength;
    }
    // (asked before anything can await: a skim tick that finds no new output ends the skim)
    expect(s.stats().skimming).toBe(true);
    const read = await s.read();
    const stats = s.stats();
    expect(stats.skimmedBytes).toBeGreaterThan(total - PARSE_BURST_BYTES - 1024 * 1024);
    // parsed: at most the burst allowance plus a tail per refresh, never the whole flood
    expect(stats.postedBytes).toBeLessThan(PARSE_BURST_BYTES + 8 * SKIM_TAIL_BYTES);
    const visible = read.lines.filter((l) => l !== "");
    expect(visible.at(-1)).toBe(line(n - 1).trimEnd());
    expect(visible.at(-2)).toBe(line(n - 2).trimEnd());
  });

  it("drops output beyond the backlog bound, counts it, and recovers with a clean screen", async () => {
    const s = screen({ parseBudget: { bytesPerSec: Infinity, burstBytes: Infinity } });
    const chunk = bytes(`${"output ".repeat(9)}\r\n`.repeat(1024)); // ~64 KiB of text lines
    const total = 32 * 1024 * 1024;
    let written = 0;
    // Synchronous writes: the worker cannot acknowledge anything meanwhile, so the
    // backlog grows until the bound and everything beyond it must be dropped.
    while (written < total) {
      s.write(chunk);
      written += chunk.byteLength;
    }
    const behind = s.stats();
    expect(behind.postedBytes + behind.pendingBytes).toBeLessThanOrEqual(MAX_BACKLOG_BYTES);
    expect(behind.droppedBytes).toBeGreaterThanOrEqual(written - MAX_BACKLOG_BYTES);
    expect(behind.postedBytes + behind.pendingBytes + behind.droppedBytes).toBe(written);
    expect(behind.gaps).toBe(1);

    await s.read(); // the worker catches up
    const caughtUp = s.stats();
    expect(caughtUp.parsedBytes).toBe(caughtUp.postedBytes);

    s.write(bytes("RECOVERED"));
    const read = await s.read({ scrollback: 10 });
    expect(read.lines[0]).toBe("RECOVERED");
    expect(read.lines.slice(1).every((line) => line === "")).toBe(true);
    expect(read.scrollback).toEqual([]);
    expect(s.stats().droppedBytes).toBe(behind.droppedBytes);
  });

  it.each([
    ["bun", [`${repoRoot}node_modules/.bin/bun`, "server/testing/smoke/headless-bun-smoke.ts"]],
    ["node with the tsx loader", [process.execPath, "--import", "tsx", "server/testing/smoke/headless-bun-smoke.ts"]],
  ])("works and lets the process exit under %s", async (_runtime, [command, ...args]) => {
    const { stdout } = await run(command, args, { cwd: repoRoot, timeout: 20_000 });
    expect(JSON.parse(stdout.trim())).toMatchObject({ ok: true, lines: ["$ echo 世界", "世界"] });
  });
});
