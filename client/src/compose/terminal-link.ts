/**
 * The compose box's link to a terminal: drafts go out as 0x03 submissions (body and submit key)
 * for the stream's generation, queries as 0x04, and the answers come back as 0x05 frames.
 */
import { encodeQuerySubmissions, encodeSubmit } from "../../../server/contract/frames.ts";
import type { TerminalView } from "../terminal/terminal-view.ts";
import { WRITTEN_SHOWN, type ComposeLink } from "./ComposeBox.tsx";

export function terminalComposeLink(view: TerminalView): ComposeLink {
  return {
    liveGeneration: () => (view.phase().phase === "live" ? (view.connection()?.tracker.generation ?? null) : null),
    // Offline, a draft is for the generation this page last saw: a restart meanwhile fails it.
    draftGeneration: () => view.connection()?.tracker.generation ?? null,
    sendSubmit: (draft, generation) => view.connection()?.send(encodeSubmit({ id: draft.id, generation }, draft.body, draft.submitKey)) ?? false,
    sendQuery: (ids) => view.connection()?.send(encodeQuerySubmissions({ ids })) ?? false,
    onSubmitStatus: (listener) => view.onSubmitStatus(listener),
    submitKeys: true,
    writtenShown: WRITTEN_SHOWN,
    sessionGone: () => {
      const phase = view.phase();
      return phase.phase === "stopped" && phase.reason === "not_found";
    },
  };
}
