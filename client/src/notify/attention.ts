/**
 * Which sessions just started asking for attention, from one session list to the next. Pure, so
 * the rules are in one place: a session rings when its `attention` goes false → true between two
 * lists this tab saw; what was already on when the tab first saw it does not ring (the user may
 * have seen it elsewhere, and a reload must not replay every old bell).
 */
import { isValidSessionId } from "../../../server/contract/protocol.ts";
import type { SessionInfo } from "../../../server/contract/types.ts";

export type AttentionStep = {
  /** sessions whose attention has just turned on */
  rang: SessionInfo[];
  /** ids whose attention has just turned off, or which are gone */
  quieted: string[];
  /** sessions with attention on now (the app badge) */
  count: number;
  /** what to pass as `previous` next time */
  seen: ReadonlyMap<string, boolean>;
};

/** `previous` null: the first list this tab sees (nothing rings). */
export function stepAttention(previous: ReadonlyMap<string, boolean> | null, sessions: readonly SessionInfo[]): AttentionStep {
  const seen = new Map<string, boolean>();
  const rang: SessionInfo[] = [];
  const quieted: string[] = [];
  let count = 0;
  for (const session of sessions) {
    seen.set(session.id, session.attention);
    if (session.attention) count++;
    const before = previous?.get(session.id);
    if (previous === null) continue;
    // A session created after the first list rings too: it was not on before.
    if (session.attention && before !== true) rang.push(session);
    if (!session.attention && before === true) quieted.push(session.id);
  }
  for (const [id, on] of previous ?? []) if (on && !seen.has(id)) quieted.push(id);
  return { rang, quieted, count, seen };
}

/** The notification for one session: its title and why. */
export function attentionMessage(session: SessionInfo): { title: string; body: string } {
  const title = session.title.trim() || session.command.join(" ") || session.id;
  const last = [...session.preview].reverse().find((line) => line.trim() !== "");
  return { title, body: last ? `Needs attention: ${last.trim()}` : "Needs attention" };
}

/** Where tapping a session's notification leads: its chat while a hybrid session is at its chat end. */
export const sessionPath = (session: Pick<SessionInfo, "id" | "hybrid">): string =>
  session.hybrid?.end === "chat" ? `/s/${session.id}/chat` : `/s/${session.id}`;

/** Whether `path` is one sessionPath can give: a message naming anything else is ignored. */
export function isSessionPath(path: string): boolean {
  const match = /^\/s\/([^/]+)(\/chat)?$/.exec(path);
  return match !== null && isValidSessionId(match[1]);
}
