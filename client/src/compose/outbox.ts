/**
 * Sends one session's drafts, in order, each at most once. The rules (docs/design.md § Submissions):
 * - a draft is in IndexedDB (`queued`, then `sending`) before it goes out;
 * - once live, every draft sent but not settled is queried; only those the server answers
 *   `missing` for, whose generation is current and whose record cannot have expired, are resent
 *   with the same ID (the server never writes an ID twice, so a racing tab cannot double it);
 * - a draft for another generation is never sent again silently: one that never reached the
 *   server is `failed: generation` (offered for resend), one it received keeps what it answers.
 *
 * The link is transport-neutral: the terminal sends 0x03/0x04 frames, the chat JSON `send` and
 * `query` (compose/terminal-link.ts, chat/chat-link.ts).
 */
import { MAX_QUERY_IDS, SUBMISSION_TTL_MS } from "../../../server/contract/protocol.ts";
import type { SubmissionState, SubmitStatusPayload } from "../../../server/contract/types.ts";
import { changeDraft, listDrafts, type Draft } from "./draft-store.ts";

/** A query the server has not answered in this long is given up until the next connection. */
export const QUERY_ANSWER_TIMEOUT_MS = 10_000;
/**
 * A `missing` answer for a draft sent longer ago than this may mean its record expired after it
 * was written: show it as missing instead of resending. Five minutes short of the server's TTL.
 */
export const RESEND_WINDOW_MS = SUBMISSION_TTL_MS - 5 * 60 * 1000;

export type OutboxLink = {
  /** the generation drafts are delivered to while the stream is live; null otherwise */
  liveGeneration(): string | null;
  /** hand one draft to the server for `generation`; false when it could not go out (not connected) */
  sendSubmit(draft: Draft, generation: string): boolean;
  /** ask for the states of at most MAX_QUERY_IDS drafts; false when it could not go out */
  sendQuery(ids: string[]): boolean;
  onSubmitStatus(listener: (status: SubmitStatusPayload) => void): () => void;
};

/** The part of draft-store.ts the outbox uses (IndexedDB in the app, memory in tests). */
export type OutboxStore = {
  listDrafts(sessionId: string): Promise<Draft[]>;
  changeDraft(id: string, change: (draft: Draft) => Partial<Draft>): Promise<Draft | null>;
};

export type OutboxOptions = { now?: () => number; store?: OutboxStore };

export type Outbox = {
  /** look for work now: after going live, after a new draft */
  pump(): void;
  /** the stream stopped being live: an unanswered query is abandoned */
  connectionChanged(): void;
  dispose(): void;
};

const defaultStore: OutboxStore = { listDrafts, changeDraft };

type Answers = { wanted: Set<string>; got: Map<string, SubmissionState>; done: (ok: boolean) => void };

export function createOutbox(sessionId: string, link: OutboxLink, options: OutboxOptions = {}): Outbox {
  const now = options.now ?? Date.now;
  const store = options.store ?? defaultStore;
  let running = false;
  let again = false;
  let disposed = false;
  let answers: Answers | null = null;

  const stopListening = link.onSubmitStatus((status) => {
    if (answers?.wanted.has(status.id)) {
      answers.got.set(status.id, status.state);
      if (answers.got.size === answers.wanted.size) answers.done(true);
    }
    // `missing` is a query's answer; what it means is decided in run().
    if (status.state === "missing") return;
    void store.changeDraft(status.id, (draft) =>
      draft.sessionId !== sessionId ? {} : { state: status.state as Draft["state"], error: status.error },
    );
  });

  function ask(ids: string[]): Promise<Map<string, SubmissionState> | null> {
    return new Promise((resolve) => {
      const got = new Map<string, SubmissionState>();
      const timer = setTimeout(() => finish(false), QUERY_ANSWER_TIMEOUT_MS);
      const finish = (ok: boolean) => {
        clearTimeout(timer);
        answers = null;
        resolve(ok ? got : null);
      };
      answers = { wanted: new Set(ids), got, done: finish };
      for (let i = 0; i < ids.length; i += MAX_QUERY_IDS) {
        if (!link.sendQuery(ids.slice(i, i + MAX_QUERY_IDS))) return finish(false);
      }
    });
  }

  async function run(): Promise<void> {
    const generation = link.liveGeneration();
    if (generation === null || disposed) return;
    const drafts = (await store.listDrafts(sessionId)).filter((d) => !d.resent);
    const toSend: Draft[] = [];
    const toQuery: Draft[] = [];
    const current = (draft: Draft) => draft.generation === null || draft.generation === generation;
    for (const draft of drafts) {
      if (draft.state !== "queued" && draft.state !== "sending" && draft.state !== "received") continue;
      if (draft.state !== "queued") toQuery.push(draft);
      else if (current(draft)) toSend.push(draft);
      else await store.changeDraft(draft.id, () => ({ state: "failed", error: "generation" }));
    }
    if (toQuery.length > 0) {
      // Drafts sent to an earlier run are asked about too: the session's log outlives restarts,
      // so one the old program got answers `written` or `partial`, not a guess.
      const got = await ask(toQuery.map((d) => d.id));
      if (got === null || link.liveGeneration() !== generation) return;
      for (const draft of toQuery) {
        if (got.get(draft.id) !== "missing") continue;
        // Never seen by the server (sent, then lost on the way) and recent enough that its record
        // cannot have expired: it was not written.
        const unseen = draft.state === "sending" && now() - (draft.sentAt ?? draft.createdAt) < RESEND_WINDOW_MS;
        if (unseen && current(draft)) toSend.push(draft);
        else if (unseen) await store.changeDraft(draft.id, () => ({ state: "failed", error: "generation" }));
        else await store.changeDraft(draft.id, () => ({ state: "missing" }));
      }
    }
    toSend.sort((a, b) => a.seq - b.seq || a.id.localeCompare(b.id));
    for (const draft of toSend) {
      if (disposed || link.liveGeneration() !== generation) return;
      // Saved as `sending` first: a reload from here on queries it instead of sending it blind.
      const saved = await store.changeDraft(draft.id, (current) =>
        current.state === "queued" || current.state === "sending" ? { state: "sending", generation, sentAt: now() } : {},
      );
      if (!saved || saved.state !== "sending") continue; // settled meanwhile (another tab) or discarded
      if (!link.sendSubmit(saved, generation)) return;
    }
  }

  async function loop(): Promise<void> {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      do {
        again = false;
        await run().catch((error: unknown) => console.warn("webmux: outbox:", error));
      } while (again && !disposed);
    } finally {
      running = false;
    }
  }

  return {
    pump: () => void loop(),
    connectionChanged: () => answers?.done(false),
    dispose() {
      disposed = true;
      answers?.done(false);
      stopListening();
    },
  };
}
