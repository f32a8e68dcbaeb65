// @ts-check
/**
 * The one worker thread that hosts every session's headless xterm terminal, so that
 * parsing PTY output (the costly part of mirroring a screen) never runs on the
 * server's main thread.
 *
 * Plain JavaScript on purpose: a worker does not reliably inherit the main thread's
 * TypeScript loader (tsx's register() hooks, vitest's module runner), while a .js ESM
 * file loads the same way under Node, vitest and Bun. Types come from
 * ./headless-protocol.ts through JSDoc.
 *
 * Ordering: everything for one screen is fed through xterm's own write queue.
 * Operations that must happen "after the bytes before them were parsed" (resize,
 * reset, requests) run inside a `terminal.write("", callback)` callback, which xterm
 * calls exactly between the preceding and the following chunks.
 */
import { readlinkSync } from "node:fs";
import { setPriority } from "node:os";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { parentPort, workerData } from "node:worker_threads";
import xtermHeadless from "@xterm/headless";
import unicode11Addon from "@xterm/addon-unicode11";
import { styledLine } from "./styled-line.js";
import { terminalSnapshot } from "../vt/terminal-snapshot.js";
import { discardQueuedWrites } from "./xterm-write-queue.js";

/** @typedef {import("./headless-protocol.ts").ToWorker} ToWorker */
/** @typedef {import("./headless-protocol.ts").FromWorker} FromWorker */
/** @typedef {import("./headless-protocol.ts").ScreenRequest} ScreenRequest */
/** @typedef {import("./headless-protocol.ts").ReadResult} ReadResult */

// Both packages are CommonJS (UMD) bundles: their named exports are only reachable
// through the default import under Node ESM.
const { Terminal } = xtermHeadless;
const { Unicode11Addon } = unicode11Addon;

/** A screen's list entry (its `preview`) should not be recomputed more often than this. */
const CHANGE_THROTTLE_MS = 250;

/** xterm throws once 50 MB wait in its write queue (WriteBuffer's discard watermark); the
 * main thread bounds each screen's backlog well below this, so this is a last defence. */
const MAX_QUEUED_BYTES = 40 * 1024 * 1024;

/**
 * @typedef {object} Screen
 * @property {number} id
 * @property {InstanceType<typeof Terminal>} term
 * @property {boolean} closed
 * @property {number} queuedBytes  bytes handed to xterm and not yet parsed
 * @property {boolean} gap  a batch was dropped here; reset before the next one
 * @property {string} lastVisible  visible text when `changed` was last evaluated
 * @property {number} lastCheckAt  time of that evaluation
 * @property {ReturnType<typeof setTimeout> | null} changeTimer
 */

/** @type {Map<number, Screen>} */
const screens = new Map();
/** parsed-bytes counts not yet reported, per screen */
/** @type {Map<number, number>} */
const unreportedParsed = new Map();
let progressScheduled = false;

/** Collect this long after the last screen closed: a burst of deletions costs one collection. */
const RELEASE_DELAY_MS = 200;
/** @type {ReturnType<typeof setTimeout> | null} */
let releaseTimer = null;

/**
 * docs/design.md § Memory that comes back: a closed screen's terminal (10 000 lines of scrollback
 * are megabytes) is garbage only until this thread's heap is collected, and an idle worker may
 * never collect by itself. A full collection frees it; the main thread then hands the C heap's
 * free pages back to the OS.
 * @returns {(() => void) | null}
 */
function fullCollector() {
  const bun = /** @type {{ Bun?: { gc?: (force: boolean) => void } }} */ (globalThis).Bun;
  if (typeof bun?.gc === "function") return () => bun.gc?.(true);
  try {
    // V8 creates `gc` only in contexts made after the flag is set.
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc");
    return typeof gc === "function" ? gc : null;
  } catch {
    return null;
  }
}
/** @type {(() => void) | null | undefined} */
let collect;

function scheduleRelease() {
  if (releaseTimer) clearTimeout(releaseTimer);
  releaseTimer = setTimeout(() => {
    releaseTimer = null;
    collect ??= fullCollector();
    collect?.();
    post({ type: "released" });
  }, RELEASE_DELAY_MS);
  releaseTimer.unref?.();
}

if (!parentPort) throw new Error("headless-worker.js must run in a worker thread");
const port = parentPort;

/**
 * Lower this thread's CPU priority to the host's HEADLESS_WORKER_NICE (docs/design.md
 * § Performance): Linux keeps a nice value per thread, and `setpriority` on a thread id changes
 * that thread only. Elsewhere (no /proc/thread-self) the worker keeps the process's priority.
 * @param {unknown} nice
 */
function yieldCpu(nice) {
  if (typeof nice !== "number") return;
  try {
    const tid = Number(readlinkSync("/proc/thread-self").split("/").pop());
    if (Number.isSafeInteger(tid) && tid > 0) setPriority(tid, nice);
  } catch {
    // not Linux, or the runtime has no per-thread priority: parse at the process's priority
  }
}
yieldCpu(/** @type {import("./headless-worker-host.ts").HeadlessWorkerData | undefined} */ (workerData)?.nice);

/** @param {FromWorker} message */
function post(message) {
  port.postMessage(message);
}

function reportProgress() {
  progressScheduled = false;
  if (unreportedParsed.size === 0) return;
  post({ type: "parsed", counts: [...unreportedParsed] });
  unreportedParsed.clear();
}

/** @param {Screen} screen @param {number} bytes */
function countParsed(screen, bytes) {
  screen.queuedBytes -= bytes;
  unreportedParsed.set(screen.id, (unreportedParsed.get(screen.id) ?? 0) + bytes);
  // One progress message per burst of callbacks (xterm fires many per parse slice).
  if (!progressScheduled) {
    progressScheduled = true;
    setImmediate(reportProgress);
  }
}

/** @param {Screen} screen */
function visibleLines(screen) {
  const buffer = screen.term.buffer.active;
  const lines = [];
  for (let row = 0; row < screen.term.rows; row++) {
    lines.push(buffer.getLine(buffer.baseY + row)?.translateToString(true).trimEnd() ?? "");
  }
  return lines;
}

/** @param {Screen} screen */
function checkChanged(screen) {
  screen.changeTimer = null;
  if (screen.closed) return;
  screen.lastCheckAt = Date.now();
  const visible = visibleLines(screen).join("\n");
  if (visible === screen.lastVisible) return;
  screen.lastVisible = visible;
  post({ type: "changed", screen: screen.id });
}

/** @param {Screen} screen */
function markMaybeChanged(screen) {
  if (screen.changeTimer || screen.closed) return;
  const wait = Math.max(0, screen.lastCheckAt + CHANGE_THROTTLE_MS - Date.now());
  screen.changeTimer = setTimeout(() => checkChanged(screen), wait);
}

/** Runs `action` once every byte written to `screen` before it has been parsed.
 * @param {Screen} screen @param {() => void} action */
function afterParsed(screen, action) {
  screen.term.write("", () => {
    if (!screen.closed) action();
  });
}

/** @param {Screen} screen @param {ScreenRequest} body @returns {unknown} */
function answer(screen, body) {
  switch (body.kind) {
    case "serialize":
      // The whole terminal state, modes included (docs/design.md § Snapshots); after a gap the
      // main thread restores the scanner's modes ahead of the next batch, so they survive it.
      return terminalSnapshot(screen.term, body.scrollback === undefined ? {} : { scrollback: body.scrollback });
    case "preview":
      return visibleLines(screen).filter((line) => line !== "").slice(-3);
    case "read": {
      // The alternate screen has no scrollback: history always comes from the normal buffer.
      const normal = screen.term.buffer.normal;
      const active = screen.term.buffer.active;
      const scratch = active.getNullCell();
      /** @param {import("@xterm/headless").IBuffer} buffer @param {number} y */
      const lineAt = (buffer, y) =>
        body.styled ? styledLine(buffer.getLine(y), scratch) : (buffer.getLine(y)?.translateToString(true).trimEnd() ?? "");
      const scrollback = [];
      for (let y = Math.max(0, normal.baseY - body.scrollback); y < normal.baseY; y++) scrollback.push(lineAt(normal, y));
      const lines = [];
      for (let row = 0; row < screen.term.rows; row++) lines.push(lineAt(active, active.baseY + row));
      /** @type {ReadResult} */
      const result = { lines, scrollback, cursor: { row: active.cursorY, col: active.cursorX } };
      return result;
    }
  }
}

/** @param {ToWorker} message */
function handle(message) {
  if (message.type === "open") {
    const term = new Terminal({
      cols: message.cols,
      rows: message.rows,
      scrollback: message.scrollback,
      allowProposedApi: true,
      logLevel: "off",
    });
    // The browser's widths (client/src/terminal/xterm-setup.ts): an emoji is two cells in both, so
    // a snapshot puts everything after it in the same column (docs/design.md § Snapshots).
    term.loadAddon(new Unicode11Addon());
    term.unicode.activeVersion = "11";
    // Device queries (DA, DSR, …) produce onData replies here; nobody listens on
    // purpose: the real client answers them.
    /** @type {Screen} */
    const screen = {
      id: message.screen,
      term,
      closed: false,
      queuedBytes: 0,
      gap: false,
      lastVisible: "",
      lastCheckAt: 0,
      changeTimer: null,
    };
    screen.lastVisible = visibleLines(screen).join("\n");
    screens.set(message.screen, screen);
    return;
  }
  const screen = screens.get(message.screen);
  if (!screen) {
    if (message.type === "request") {
      post({ type: "reply", request: message.request, ok: false, message: "screen closed" });
    }
    return;
  }
  switch (message.type) {
    case "write": {
      const bytes = message.data.byteLength;
      screen.queuedBytes += bytes;
      if (screen.queuedBytes > MAX_QUEUED_BYTES) {
        screen.gap = true;
        countParsed(screen, bytes);
        return;
      }
      if (message.gap || screen.gap) {
        // Bytes are missing before this batch: parser and screen state are unknown, so
        // start clean; the program's next redraw heals the screen.
        screen.gap = false;
        afterParsed(screen, () => screen.term.reset());
      }
      screen.term.write(message.data, () => {
        if (screen.closed) return;
        countParsed(screen, bytes);
        markMaybeChanged(screen);
      });
      return;
    }
    case "resize":
      afterParsed(screen, () => {
        screen.term.resize(message.cols, message.rows);
        markMaybeChanged(screen);
      });
      return;
    case "reset":
      afterParsed(screen, () => {
        screen.term.reset();
        markMaybeChanged(screen);
      });
      return;
    case "request":
      afterParsed(screen, () => {
        let reply;
        try {
          reply = { type: "reply", request: message.request, ok: true, value: answer(screen, message.body) };
        } catch (error) {
          reply = { type: "reply", request: message.request, ok: false, message: String(error) };
        }
        // The main thread's backlog accounting must be current when the reply lands.
        reportProgress();
        post(/** @type {FromWorker} */ (reply));
      });
      return;
    case "close":
      screen.closed = true;
      if (screen.changeTimer) clearTimeout(screen.changeTimer);
      screens.delete(screen.id);
      unreportedParsed.delete(screen.id);
      discardQueuedWrites(screen.term);
      screen.term.dispose();
      scheduleRelease();
      return;
  }
}

port.on("message", handle);
