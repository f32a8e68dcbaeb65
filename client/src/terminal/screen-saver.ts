/**
 * Keeps the IndexedDB copy of one terminal current: after output settles, at least every few
 * seconds during a flood, and when the page is hidden or unloaded.
 *
 * A copy is only useful if its offset matches its screen exactly. The view reports the rendered
 * point from xterm's write callbacks, which run right after their chunk is parsed and in the same
 * task; a save runs in a task of its own, so the buffer it serializes is exactly what the last
 * callback reported. (A reset is written as one chunk for this reason: RIS, marker and snapshot.)
 *
 * The copy is written by the server's snapshot writer (server/vt/terminal-snapshot.js, see
 * docs/design.md § Snapshots), so a reload restores what a reset does: scroll region, charsets,
 * saved cursors, tab stops, modes and both screens, which @xterm/addon-serialize lost. The rendered
 * offset may fall inside an escape sequence or a UTF-8 character: the copy then carries that
 * sequence's bytes so far after the snapshot, as a server's snapshot does, and the append after a
 * reload goes on with the rest of it.
 */
import type { Terminal } from "@xterm/xterm";
import type { ResumePoint } from "../../../server/contract/stream-tracker.ts";
import { terminalSnapshot } from "../../../server/vt/terminal-snapshot.js";
import { followedBy } from "../../../server/vt/unfinished-sequence.ts";
import { saveScreen, type StoredScreen } from "../storage/screen-store.ts";
import { truncationMarkerSequence } from "./truncation-marker.ts";

/** Save this long after the last output, so a burst (or a typed word) ends up in one save. */
export const SAVE_IDLE_MS = 500;
/** …but no later than this after the first unsaved output: a reload mid-flood replays only this much. */
export const SAVE_MAX_DELAY_MS = 5_000;
/**
 * History kept in the copy. Serializing is one main-thread task that grows with the lines: 2 000
 * lines take tens of milliseconds (12 000, the live scrollback, take hundreds) and parse back fast
 * enough for an instant reload. The screen itself is always kept whole.
 */
export const STORED_SCROLLBACK_LINES = 2_000;

export type ScreenSaverStats = {
  /** the offset of the last copy written to IndexedDB, null before the first */
  savedOffset: number | null;
  saves: number;
};

export type ScreenSaver = {
  readonly stats: Readonly<ScreenSaverStats>;
  /** xterm has parsed everything up to `point` */
  rendered(point: ResumePoint): void;
  /** save now if anything is unsaved */
  flush(): void;
  dispose(): void;
};

export type ScreenSaverOptions = {
  sessionId: string;
  terminal: Terminal;
  /** the unfinished sequence at the end of what `terminal` has parsed (ReplayWriter.unfinishedTail) */
  unfinishedTail: () => Uint8Array;
  save?: (sessionId: string, screen: StoredScreen) => Promise<void>;
};

/** The copy of `terminal` as it stands at `point`, whose parser ends inside `unfinishedTail` (maybe empty). */
export function storedCopy(terminal: Terminal, point: ResumePoint, unfinishedTail: Uint8Array): StoredScreen {
  // History cut here gets the same marker as history the server dropped.
  const cut = terminal.buffer.normal.length - terminal.rows > STORED_SCROLLBACK_LINES;
  return {
    generation: point.generation,
    offset: point.offset,
    serialized:
      (cut ? truncationMarkerSequence(terminal.rows) : "") +
      terminalSnapshot(terminal, { scrollback: STORED_SCROLLBACK_LINES }),
    tail: unfinishedTail,
    cols: terminal.cols,
    rows: terminal.rows,
    savedAt: Date.now(),
  };
}

/** What is written to a fresh terminal to paint a stored copy: its snapshot, then its unfinished sequence. */
export function copyBytes(stored: StoredScreen): string | Uint8Array {
  return stored.tail ? followedBy(stored.serialized, stored.tail) : stored.serialized;
}

export function createScreenSaver(options: ScreenSaverOptions): ScreenSaver {
  const save = options.save ?? saveScreen;
  const stats: ScreenSaverStats = { savedOffset: null, saves: 0 };
  let point: ResumePoint | null = null;
  let saved: ResumePoint | null = null;
  let idleTimer: ReturnType<typeof setTimeout> | null = null;
  let firstUnsavedAt: number | null = null;
  let disposed = false;

  const same = (a: ResumePoint | null, b: ResumePoint | null) =>
    a !== null && b !== null && a.generation === b.generation && a.offset === b.offset;

  function flush(): void {
    if (idleTimer !== null) clearTimeout(idleTimer);
    idleTimer = null;
    firstUnsavedAt = null;
    if (disposed || point === null || same(point, saved)) return;
    const screen = storedCopy(options.terminal, point, options.unfinishedTail());
    saved = point;
    void save(options.sessionId, screen).then(() => {
      stats.savedOffset = screen.offset;
      stats.saves += 1;
    });
  }

  function schedule(): void {
    const now = performance.now();
    firstUnsavedAt ??= now;
    if (idleTimer !== null) clearTimeout(idleTimer);
    const wait = Math.min(SAVE_IDLE_MS, Math.max(0, firstUnsavedAt + SAVE_MAX_DELAY_MS - now));
    idleTimer = setTimeout(flush, wait);
  }

  const onHidden = () => {
    if (document.visibilityState === "hidden") flush();
  };
  document.addEventListener("visibilitychange", onHidden);
  window.addEventListener("pagehide", flush);

  return {
    stats,
    rendered(next) {
      point = next;
      if (!same(point, saved)) schedule();
    },
    flush,
    dispose() {
      flush();
      disposed = true;
      if (idleTimer !== null) clearTimeout(idleTimer);
      document.removeEventListener("visibilitychange", onHidden);
      window.removeEventListener("pagehide", flush);
    },
  };
}
