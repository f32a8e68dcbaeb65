/**
 * The local copy of each session's terminal (docs/design.md § Decisions beyond the original
 * specification): where it stands in the stream (generation, offset) and its screen as written by
 * the snapshot writer (server/vt/terminal-snapshot.js), so a reload or a reopened app paints the
 * screen at once and resumes with `append`.
 *
 * Its own IndexedDB database: idb-keyval creates one object store per database, so other local
 * data (drafts) must use another database name.
 */
import { createStore, del, delMany, get, keys, set, type UseStore } from "idb-keyval";
import { isValidGeneration } from "../../../server/contract/protocol.ts";

const DATABASE = "webmux-screens";
const STORE = "screens";

export type StoredScreen = {
  generation: string;
  /** the stream offset the serialized screen corresponds to exactly */
  offset: number;
  serialized: string;
  /**
   * Written after `serialized`: the unfinished sequence (or UTF-8 character) the stream ended inside
   * at `offset`, so the rest of it, first in the `append`, is read as part of it (docs/design.md §
   * Snapshots). Absent in copies saved before it existed.
   */
  tail?: Uint8Array;
  cols: number;
  rows: number;
  savedAt: number;
};

let store: UseStore | null = null;
const screens = (): UseStore => (store ??= createStore(DATABASE, STORE));

function isStoredScreen(value: unknown): value is StoredScreen {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    isValidGeneration(v.generation) &&
    Number.isSafeInteger(v.offset) && (v.offset as number) >= 0 &&
    typeof v.serialized === "string" &&
    (v.tail === undefined || v.tail instanceof Uint8Array) &&
    Number.isInteger(v.cols) && Number.isInteger(v.rows) &&
    typeof v.savedAt === "number"
  );
}

/** The stored copy, or null when there is none or it is unreadable (then it is dropped). */
export async function loadScreen(sessionId: string): Promise<StoredScreen | null> {
  try {
    const value = await get<unknown>(sessionId, screens());
    if (value === undefined) return null;
    if (isStoredScreen(value)) return value;
    await del(sessionId, screens());
  } catch (error) {
    // Private browsing or a blocked database: the app works, it only replays from the server.
    console.warn("webmux: cannot read the local screen copy", error);
  }
  return null;
}

export async function saveScreen(sessionId: string, screen: StoredScreen): Promise<void> {
  try {
    await set(sessionId, screen, screens());
  } catch (error) {
    console.warn("webmux: cannot save the local screen copy", error);
  }
}

export async function forgetScreen(sessionId: string): Promise<void> {
  try {
    await del(sessionId, screens());
  } catch {
    // Nothing to do: a stale copy is replaced by `reset` when its generation is gone.
  }
}

/** Drops the copies of sessions the server no longer has. */
export async function pruneScreens(liveSessionIds: ReadonlySet<string>): Promise<void> {
  try {
    const stored = await keys<string>(screens());
    const gone = stored.filter((id) => !liveSessionIds.has(id));
    if (gone.length > 0) await delMany(gone, screens());
  } catch {
    // Best effort, as above.
  }
}
