/**
 * The compose box's link to the chat: a draft goes out as a JSON `send {id, text}` (the turn's id
 * is the draft's submission id, so a resend after a reload is the same turn), queries as `query
 * {ids}`, and the answers are the connection's `submission` events. Drafts of the chat carry
 * CHAT_DRAFT_GENERATION (compose/draft-store.ts explains the rule), live whenever `hello` came.
 */
import type { Accessor } from "solid-js";
import type { SubmitStatusPayload } from "../../../server/contract/types.ts";
import type { ComposeLink } from "../compose/ComposeBox.tsx";
import { CHAT_DRAFT_GENERATION } from "../compose/draft-store.ts";
import type { ChatConnection, ChatPhase } from "./chat-connection.ts";

export function chatComposeLink(
  connection: () => ChatConnection | null,
  phase: Accessor<ChatPhase>,
  onSubmission: (listener: (status: SubmitStatusPayload) => void) => () => void,
): ComposeLink {
  return {
    liveGeneration: () => (phase().phase === "live" ? CHAT_DRAFT_GENERATION : null),
    draftGeneration: () => CHAT_DRAFT_GENERATION,
    sendSubmit: (draft) => connection()?.send({ type: "send", id: draft.id, text: draft.body }) ?? false,
    sendQuery: (ids) => connection()?.send({ type: "query", ids }) ?? false,
    onSubmitStatus: onSubmission,
    submitKeys: false,
    // A written draft is a user turn in the transcript: the list keeps only what is not there yet.
    writtenShown: 0,
    sessionGone: () => {
      const p = phase();
      return p.phase === "stopped" && p.reason === "not_found";
    },
  };
}
