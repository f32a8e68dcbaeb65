/**
 * The compose box under the terminal: a multi-line prompt sent as one submission (0x03) with the
 * session's submit key, and the list of drafts with their states. Drafts live in IndexedDB and
 * are delivered by the Outbox, so one written offline waits and goes out when the session is back.
 */
import { createEffect, createSignal, For, on, onCleanup, Show } from "solid-js";
import type { TerminalView } from "../terminal/terminal-view.ts";
import { addDraft, changeDraft, deleteDraft, listDrafts, watchDrafts, type Draft } from "./draft-store.ts";
import { createOutbox } from "./outbox.ts";
import { loadSubmitKey, saveSubmitKey, SUBMIT_KEYS } from "./submit-key.ts";
import "./compose.css";

/** Written drafts stay listed this long, so the user sees them land. */
export const WRITTEN_SHOWN = 3;

export type ComposeBoxProps = { sessionId: string; view: TerminalView };

const STATE_LABELS: Record<Draft["state"], string> = {
  queued: "queued",
  sending: "sending",
  received: "received",
  written: "written",
  partial: "partly written",
  failed: "failed",
  missing: "missing",
};

function describe(draft: Draft): string {
  if (draft.state === "failed" && draft.error === "generation") return "failed: the session restarted";
  if (draft.state === "failed") return `failed: ${draft.error ?? "unknown"}`;
  return STATE_LABELS[draft.state];
}

const offerResend = (d: Draft) => d.state === "failed" || d.state === "partial" || d.state === "missing";

export function ComposeBox(props: ComposeBoxProps) {
  const [text, setText] = createSignal("");
  const [drafts, setDrafts] = createSignal<Draft[]>([]);
  const [submitKey, setSubmitKey] = createSignal(loadSubmitKey(props.sessionId));
  const view = props.view;
  const liveGeneration = () => (view.phase().phase === "live" ? (view.connection()?.tracker.generation ?? null) : null);

  const outbox = createOutbox(props.sessionId, {
    liveGeneration,
    send: (frame) => view.connection()?.send(frame) ?? false,
    onSubmitStatus: (listener) => view.onSubmitStatus(listener),
  });
  onCleanup(() => outbox.dispose());

  async function refresh(): Promise<void> {
    setDrafts(await listDrafts(props.sessionId));
  }
  onCleanup(watchDrafts((sessionId) => sessionId === props.sessionId && void refresh()));
  void refresh();

  createEffect(
    on(
      () => view.phase().phase,
      (phase) => (phase === "live" ? outbox.pump() : outbox.connectionChanged()),
    ),
  );

  async function send(): Promise<void> {
    const body = text();
    if (body.trim() === "") return;
    setText("");
    await addDraft({
      sessionId: props.sessionId,
      generation: view.connection()?.tracker.generation ?? null,
      body,
      submitKey: submitKey(),
    });
    outbox.pump();
  }

  async function resend(draft: Draft): Promise<void> {
    await addDraft({ sessionId: draft.sessionId, generation: liveGeneration(), body: draft.body, submitKey: draft.submitKey });
    await changeDraft(draft.id, () => ({ resent: true }));
    outbox.pump();
  }

  const shown = () => {
    const open = drafts().filter((d) => !d.resent);
    const written = open.filter((d) => d.state === "written").slice(-WRITTEN_SHOWN);
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
                <span class={`compose__state compose__state--${draft.state}`}>{describe(draft)}</span>
                <Show when={offerResend(draft)}>
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
          <select
            class="compose__key"
            aria-label="Submit key"
            value={submitKey()}
            onChange={(event) => setSubmitKey(saveSubmitKey(props.sessionId, event.currentTarget.value))}
          >
            <For each={SUBMIT_KEYS}>{(key) => <option value={key.bytes}>{key.label}</option>}</For>
          </select>
          <button class="button button--primary" type="submit">
            Send
          </button>
        </div>
      </form>
    </section>
  );
}
