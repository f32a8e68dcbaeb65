/**
 * The last session list this device saw, so the app opened offline (from the service worker's
 * app shell) shows the sessions it knew instead of an error. Its own IndexedDB database.
 */
import { createStore, get, set, type UseStore } from "idb-keyval";
import type { SessionInfo } from "../../../server/contract/types.ts";

const DATABASE = "webmux-sessions";
const STORE = "lists";
const KEY = "last";

let store: UseStore | null = null;
const lists = (): UseStore => (store ??= createStore(DATABASE, STORE));

export async function saveSessionList(sessions: readonly SessionInfo[]): Promise<void> {
  await set(KEY, sessions, lists());
}

/** The last saved list, or null (never saved, unreadable, or IndexedDB unavailable). */
export async function loadSessionList(): Promise<SessionInfo[] | null> {
  try {
    const value: unknown = await get(KEY, lists());
    return Array.isArray(value) ? (value as SessionInfo[]) : null;
  } catch {
    return null;
  }
}
