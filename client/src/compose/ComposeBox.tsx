/**
 * The compose box under the terminal and the chat: a multi-line prompt sent as one submission,
 * and the list of drafts with their states. Drafts live in IndexedDB and are delivered by the
 * Outbox, so one written offline waits and goes out when the session is back. What a submission
 * is on the wire is the link's business (compose/terminal-link.ts, chat/chat-link.ts).
 */
import { createEffect, createSignal, For, on, onCleanup, Show } from "solid-js";
import { addDraft, CHAT_DRAFT_GENERATION, changeDraft, deleteDraft, isUnsettled, listDrafts, watchDrafts, type Draft } from "./draft-store.ts";
import { createOutbox, type OutboxLink } from "./outbox.ts";
import { loadSubmitKey, saveSubmitKey, SUBMIT_KEYS } from "./submit-key.ts";
import "./compose.css";

/** Under a terminal, the last few written drafts stay listed, so the user sees them land. */
export const WRITTEN_SHOWN = 3;

export type ComposeLink = OutboxLink & {
  /** the generation a new draft is for, known even while offline; null when never seen */
  draftGeneration(): string | null;
  /** offer the submit key picker (the terminal; a chat turn has no submit key) */
  submitKeys: boolean;
  /** how many written drafts stay listed (the chat shows them as turns in its transcript instead) */
  writtenShown: number;
  /** the session is gone for good (deleted, or the server restarted: sessions live as long as its process) */
  sessionGone?(): boolean;
};

/** `liveGeneration` must be reactive: the box pumps the outbox whenever it changes. */
export type ComposeBoxProps = { sessionId: string; link: ComposeLink };

const STATE_LABELS: Record<Draft["state"], string> = {
  queued: "queued",
  sending: "sending",
  received: "received",
  written: "written",
  partial: "partly written",
  failed: "failed",
  missing: "missing",
};

function describe(draft: Draft, sessionGone: boolean): string {
  if (sessionGone && draft.state === "missing") return "unknown: the session ended while it was being sent";
  if (sessionGone && draft.state === "failed" && draft.error === "generation") return "failed: the session no longer exists";
  if (draft.state === "failed" && draft.error === "generation") return "failed: the session restarted or moved";
  if (draft.state === "failed") return `failed: ${draft.error ?? "unknown"}`;
  return STATE_LABELS[draft.state];
}

const offerResend = (d: Draft) => d.state === "failed" || d.state === "partial" || d.state === "missing";

export function ComposeBox(props: ComposeBoxProps) {
  const [text, setText] = createSignal("");
  const [drafts, setDrafts] = createSignal<Draft[]>([]);
  const [submitKey, setSubmitKey] = createSignal(loadSubmitKey(props.sessionId));
  const link = props.link;
  const liveGeneration = () => link.liveGeneration();

  const outbox = createOutbox(props.sessionId, link);
  onCleanup(() => outbox.dispose());

  async function refresh(): Promise<void> {
    setDrafts(await listDrafts(props.sessionId));
  }
  onCleanup(watchDrafts((sessionId) => sessionId === props.sessionId && void refresh()));
  void refresh();

  createEffect(
    on(liveGeneration, (generation) => (generation !== null ? outbox.pump() : outbox.connectionChanged())),
  );

  // Nothing reaches a session that is gone: settle its drafts so none waits forever. One never
  // sent failed; one sent may have been written before the end, so it is `missing`, not failed.
  const sessionGone = () => link.sessionGone?.() ?? false;
  async function settleForGoneSession(): Promise<void> {
    for (const draft of await listDrafts(props.sessionId)) {
      if (draft.resent || !isUnsettled(draft)) continue;
      await changeDraft(draft.id, (current) =>
        current.state === "queued" ? { state: "failed", error: "generation" } : isUnsettled(current) ? { state: "missing" } : {},
      );
    }
  }
  createEffect(on(sessionGone, (gone) => gone && void settleForGoneSession()));

  async function send(): Promise<void> {
    const body = text();
    if (body.trim() === "") return;
    setText("");
    await addDraft({
      sessionId: props.sessionId,
      generation: link.draftGeneration(),
      body,
      submitKey: link.submitKeys ? submitKey() : "",
    });
    outbox.pump();
  }

  async function resend(draft: Draft): Promise<void> {
    // A resend is for where the session is now: a terminal draft resent in the chat becomes a turn.
    const submitKeyNow = !link.submitKeys ? "" : draft.generation === CHAT_DRAFT_GENERATION ? submitKey() : draft.submitKey;
    await addDraft({ sessionId: draft.sessionId, generation: liveGeneration() ?? link.draftGeneration(), body: draft.body, submitKey: submitKeyNow });
    await changeDraft(draft.id, () => ({ resent: true }));
    outbox.pump();
  }

  const shown = () => {
    const open = drafts().filter((d) => !d.resent);
    const written = link.writtenShown > 0 ? open.filter((d) => d.state === "written").slice(-link.writtenShown) : [];
    return open.filter((d) => d.state !== "written" || written.includes(d));
  };

  return (
    <section class="compose" aria-label="Compose">
      <Show when={shown().length > 0}>
        <ol class="compose__drafts">
          <For each={shown()}>
            {(draft) => (
              <li class="compose__draft" data-state={draft.state} data-error={draft.error ?? ""} data-id={draft.id}>
                <span class="compose__body">{draft.body}</span>
                <span class={`compose__state compose__state--${draft.state}`}>{describe(draft, sessionGone())}</span>
                <Show when={offerResend(draft) && !sessionGone()}>
                  <button class="button button--small" type="button" onClick={() => void resend(draft)}>
                    Resend
                  </button>
                </Show>
                <Show when={draft.state !== "sending" && draft.state !== "received"}>
                  <button class="button button--small" type="button" aria-label="Discard" onClick={() => void deleteDraft(draft)}>
                    ×
                  </button>
                </Show>
              </li>
            )}
          </For>
        </ol>
      </Show>
      <form
        class="compose__form"
        onSubmit={(event) => {
          event.preventDefault();
          void send();
        }}
      >
        <textarea
          class="compose__input"
          aria-label="Prompt"
          placeholder="Prompt (Ctrl+Enter sends)"
          rows={2}
          autocomplete="off"
          value={text()}
          onInput={(event) => setText(event.currentTarget.value)}
          onKeyDown={(event) => {
            if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
              event.preventDefault();
              void send();
            }
          }}
        />
        <div class="compose__actions">
          <Show when={link.submitKeys}>
            <select
              class="compose__key"
              aria-label="Submit key"
              value={submitKey()}
              onChange={(event) => setSubmitKey(saveSubmitKey(props.sessionId, event.currentTarget.value))}
            >
              <For each={SUBMIT_KEYS}>{(key) => <option value={key.bytes}>{key.label}</option>}</For>
            </select>
          </Show>
          <button class="button button--primary" type="submit">
            Send
          </button>
        </div>
      </form>
    </section>
  );
}
