/**
 * Drafts and submissions of the compose box, kept in IndexedDB before anything is sent, so a
 * reload, an offline period, another tab or a server restart never loses one nor sends it twice.
 *
 * Its own database (idb-keyval makes one object store per database; screens use another).
 * Every change is an idb-keyval `update` (one read-write transaction), and a state never moves
 * back (see `stateRank`), so two tabs racing on the same draft end in the furthest state.
 */
import { createStore, del, entries, update, type UseStore } from "idb-keyval";
import type { SubmissionError } from "../../../server/contract/types.ts";

const DATABASE = "webmux-drafts";
const STORE = "drafts";
/** Tells other tabs of this browser that drafts changed, so their lists follow. */
const CHANGE_CHANNEL = "webmux-drafts";

/**
 * queued: saved, not sent; sending: handed to the socket, no answer yet; the rest are the
 * server's states. `missing` is kept when the server no longer knows a draft it may have written.
 */
export type DraftState = "queued" | "sending" | "received" | "written" | "partial" | "failed" | "missing";

export type Draft = {
  /** the submission ID, [A-Za-z0-9_-]{8,64}, fixed at creation: every send uses it */
  id: string;
  sessionId: string;
  /** the generation it is for; null when written before this device ever saw the session */
  generation: string | null;
  body: string;
  submitKey: string;
  state: DraftState;
  error?: SubmissionError;
  /** creation order: drafts of one session are sent in this order */
  seq: number;
  createdAt: number;
  /** when it was last handed to a socket */
  sentAt?: number;
  /** a failed draft the user sent again as a new draft */
  resent?: boolean;
};

/**
 * The generation of every chat draft. Chat turns are not tied to a PTY generation (the server
 * records chat sends with generation "chat", server/hybrid/chat-outbox.ts), so a chat draft is
 * stamped with this one value, never null: the chat's outbox delivers exactly these, and a
 * terminal's outbox, whose generation is a PTY's, fails them as `failed: generation` (and the
 * other way round). A draft written for one end is therefore never delivered silently to the
 * other after a move; the user can resend it where the session is now.
 */
export const CHAT_DRAFT_GENERATION = "chat";

/** Unsent or unsettled: the outbox still has work with it. */
export const isUnsettled = (draft: Draft): boolean => draft.state === "queued" || draft.state === "sending" || draft.state === "received";

/** States only move forward: a stale write from another tab cannot undo an answer. */
export function stateRank(state: DraftState): number {
  switch (state) {
    case "queued":
      return 0;
    case "sending":
      return 1;
    case "received":
      return 2;
    default:
      return 3;
  }
}

let store: UseStore | null = null;
const drafts = (): UseStore => (store ??= createStore(DATABASE, STORE));
let lastSeq = 0;
let channel: BroadcastChannel | null = null;
const changeChannel = (): BroadcastChannel | null =>
  (channel ??= typeof BroadcastChannel === "undefined" ? null : new BroadcastChannel(CHANGE_CHANNEL));
const localListeners = new Set<(sessionId: string) => void>();

function announce(sessionId: string): void {
  for (const listener of localListeners) listener(sessionId);
  changeChannel()?.postMessage(sessionId);
}

/** Calls `listener` with the session ID whenever a draft changes, in this tab or another. */
export function watchDrafts(listener: (sessionId: string) => void): () => void {
  localListeners.add(listener);
  const ch = changeChannel();
  const onMessage = (event: MessageEvent) => typeof event.data === "string" && listener(event.data);
  ch?.addEventListener("message", onMessage);
  return () => {
    localListeners.delete(listener);
    ch?.removeEventListener("message", onMessage);
  };
}

/**
 * 21 random URL-safe characters: far inside the 8–64 an ID may have (docs/protocol.md § Submissions)
 * and never repeated in practice.
 */
export function newSubmissionId(): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
  const bytes = crypto.getRandomValues(new Uint8Array(21));
  return Array.from(bytes, (b) => alphabet[b & 63]).join("");
}

/** Saves a new queued draft and returns it (resolved once it is in IndexedDB). */
export async function addDraft(fields: Pick<Draft, "sessionId" | "generation" | "body" | "submitKey">): Promise<Draft> {
  const now = Date.now();
  lastSeq = Math.max(now, lastSeq + 1);
  const draft: Draft = { ...fields, id: newSubmissionId(), state: "queued", seq: lastSeq, createdAt: now };
  await update(draft.id, () => draft, drafts());
  announce(draft.sessionId);
  return draft;
}

/** `current` with `patch` applied, or `current` itself when the patch would move its state back. */
export function mergeDraft(current: Draft, patch: Partial<Draft>): Draft {
  if (patch.state !== undefined && stateRank(patch.state) < stateRank(current.state)) return current;
  return { ...current, ...patch };
}

/**
 * Applies `change` to the stored draft in one transaction; a change that would move its state
 * back is dropped. Resolves with the stored draft (null when it is gone).
 */
export async function changeDraft(id: string, change: (draft: Draft) => Partial<Draft>): Promise<Draft | null> {
  let result: Draft | null = null;
  await update<Draft | undefined>(
    id,
    (current) => (current ? (result = mergeDraft(current, change(current))) : undefined),
    drafts(),
  );
  if (result) announce((result as Draft).sessionId);
  return result;
}

export async function deleteDraft(draft: Draft): Promise<void> {
  await del(draft.id, drafts());
  announce(draft.sessionId);
}

/** A session's drafts in creation order. */
export async function listDrafts(sessionId: string): Promise<Draft[]> {
  const all = await entries<string, Draft>(drafts());
  return all
    .map(([, draft]) => draft)
    .filter((draft) => draft && draft.sessionId === sessionId)
    .sort((a, b) => a.seq - b.seq || a.id.localeCompare(b.id));
}
