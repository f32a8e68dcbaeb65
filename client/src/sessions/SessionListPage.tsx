import { createMemo, createSignal, For, Show } from "solid-js";
import type { SessionInfo } from "../../../server/contract/types.ts";
import { describeError, isUnauthorized, type Api } from "../api.ts";
import { PlusIcon, ThemeIcon } from "../icons.tsx";
import type { Theme } from "../storage/theme.ts";
import { splitCommandLine } from "./command-line.ts";
import { createSessionFeed, type SessionFeed } from "./session-feed.ts";
import { SessionRow } from "./SessionRow.tsx";
import { ErrorAlert } from "../views/ErrorAlert.tsx";

export type SessionListProps = {
  api: Api;
  /** null: not known yet (the live feed's snapshot brings it) */
  initial: SessionInfo[] | null;
  /** the app's feed (one /ws/sessions socket for every page); without it the page opens its own */
  feed?: SessionFeed;
  clientId: string;
  label: () => string;
  setLabel: (label: string) => void;
  theme: Theme;
  onOpen: (id: string) => void;
  onSettings: () => void;
};

/**
 * The sessions the server keeps, live. A 401 from any call here is handled by the App (it shows
 * Login), so this page only reports the other failures.
 */
export function SessionListPage(props: SessionListProps) {
  const feed = props.feed ?? createSessionFeed(props.api, props.initial);
  const sessionIds = createMemo(() => feed.sessions().map((s) => s.id), undefined, { equals: (a, b) => a.length === b.length && a.every((id, i) => id === b[i]) });
  const sessionById = (id: string) => feed.sessions().find((s) => s.id === id);
  const [busy, setBusy] = createSignal(false);
  const [error, setError] = createSignal<string | null>(null);
  const [showOptions, setShowOptions] = createSignal(false);
  const [command, setCommand] = createSignal("");
  const [cwd, setCwd] = createSignal("");

  async function create(withOptions: boolean) {
    if (busy()) return;
    const request: { command?: string[]; cwd?: string } = {};
    if (withOptions) {
      const split = splitCommandLine(command());
      if ("error" in split) {
        setError(split.error);
        return;
      }
      if (split.argv.length > 0) request.command = split.argv;
      if (cwd().trim() !== "") request.cwd = cwd().trim();
    }
    setBusy(true);
    setError(null);
    try {
      feed.apply(await props.api.createSession(request));
      if (withOptions) {
        setShowOptions(false);
        setCommand("");
        setCwd("");
      }
    } catch (failure) {
      if (!isUnauthorized(failure)) setError(describeError(failure));
    } finally {
      setBusy(false);
    }
  }

  return (
    <main class="page">
      <header class="toolbar">
        <h1 class="toolbar__title">Sessions</h1>
        <button class="icon-button" type="button" aria-label="Toggle theme" title="Toggle dark/light" onClick={() => props.theme.toggle()}>
          <ThemeIcon />
        </button>
        <button
          class="icon-button"
          type="button"
          aria-label="Start with a command"
          aria-expanded={showOptions()}
          title="Choose command and directory"
          onClick={() => setShowOptions(!showOptions())}
        >
          <PlusIcon />
        </button>
        <button class="button button--primary" type="button" onClick={() => create(false)} disabled={busy()}>
          {busy() && !showOptions() ? "Starting…" : "New session"}
        </button>
      </header>
      <Show when={showOptions()}>
        <form
          class="card create"
          aria-label="New session"
          onSubmit={(event) => {
            event.preventDefault();
            void create(true);
          }}
        >
          <label class="field">
            <span>Command</span>
            <input
              value={command()}
              placeholder="empty: your login shell"
              autocapitalize="off"
              autocomplete="off"
              spellcheck={false}
              onInput={(event) => setCommand(event.currentTarget.value)}
            />
          </label>
          <label class="field">
            <span>Working directory</span>
            <input
              value={cwd()}
              placeholder="empty: the server's"
              autocapitalize="off"
              autocomplete="off"
              spellcheck={false}
              onInput={(event) => setCwd(event.currentTarget.value)}
            />
          </label>
          <div class="create__buttons">
            <button class="button" type="button" onClick={() => setShowOptions(false)}>
              Cancel
            </button>
            <button class="button button--primary" type="submit" disabled={busy()}>
              {busy() ? "Starting…" : "Start"}
            </button>
          </div>
        </form>
      </Show>
      <ErrorAlert message={error()} />
      <Show
        when={feed.sessions().length > 0}
        fallback={<p class="empty">{feed.known() ? "No sessions yet. Start one with “New session”." : "Loading…"}</p>}
      >
        <ul class="sessions" aria-label="Sessions">
          {/* Keyed by id, not by object: every `updated` brings a new object, and a row must keep
              its own state (an open rename or delete confirmation) across updates. */}
          <For each={sessionIds()}>
            {(id) => (
              <Show when={sessionById(id)}>
                {(session) => <SessionRow session={session()} api={props.api} feed={feed} clientId={props.clientId} onOpen={props.onOpen} />}
              </Show>
            )}
          </For>
        </ul>
      </Show>
      <DeviceLabel label={props.label} setLabel={props.setLabel} onSettings={props.onSettings} />
    </main>
  );
}

/** The name other tabs and devices see when this one controls a session. */
function DeviceLabel(props: { label: () => string; setLabel: (label: string) => void; onSettings: () => void }) {
  const [editing, setEditing] = createSignal(false);
  const [draft, setDraft] = createSignal("");
  return (
    <section class="device" aria-label="This device">
      <Show
        when={editing()}
        fallback={
          <>
            <span class="device__label">
              This device: <strong>{props.label()}</strong>
            </span>
            <button class="link-button" type="button" onClick={() => (setDraft(props.label()), setEditing(true))}>
              Edit
            </button>
            <a class="link-button" href="/settings" onClick={(event) => (event.preventDefault(), props.onSettings())}>
              Settings
            </a>
          </>
        }
      >
        <form
          class="device__form"
          onSubmit={(event) => {
            event.preventDefault();
            props.setLabel(draft());
            setEditing(false);
          }}
        >
          <input
            class="input"
            aria-label="Device label"
            value={draft()}
            maxLength={40}
            autofocus
            onInput={(event) => setDraft(event.currentTarget.value)}
            onKeyDown={(event) => event.key === "Escape" && setEditing(false)}
          />
          <button class="button button--primary button--small" type="submit">
            Save
          </button>
        </form>
      </Show>
    </section>
  );
}
