import { createSignal, For, Show } from "solid-js";
import type { SessionInfo } from "../../../server/contract/types.ts";
import { describeError, isUnauthorized, type Api } from "../api.ts";

/**
 * The sessions the server keeps. A 401 from any call here is handled by the App
 * (it shows Login), so this view only reports the other failures.
 */
export function SessionList(props: { api: Api; initial: SessionInfo[] }) {
  // Read once: the list is this view's own state from here on.
  const [sessions, setSessions] = createSignal(props.initial);
  const [busy, setBusy] = createSignal<"creating" | "refreshing" | null>(null);
  const [error, setError] = createSignal<string | null>(null);

  async function run(kind: "creating" | "refreshing", action: () => Promise<void>) {
    if (busy()) return;
    setBusy(kind);
    setError(null);
    try {
      await action();
    } catch (failure) {
      if (!isUnauthorized(failure)) setError(describeError(failure));
    } finally {
      setBusy(null);
    }
  }

  const create = () =>
    run("creating", async () => {
      const created = await props.api.createSession({});
      setSessions((current) => [...current.filter((session) => session.id !== created.id), created]);
    });

  const refresh = () =>
    run("refreshing", async () => {
      setSessions(await props.api.listSessions());
    });

  return (
    <main class="page">
      <header class="toolbar">
        <h1 class="toolbar__title">Sessions</h1>
        <button class="button" type="button" onClick={refresh} disabled={busy() !== null}>
          {busy() === "refreshing" ? "Refreshing…" : "Refresh"}
        </button>
        <button class="button button--primary" type="button" onClick={create} disabled={busy() !== null}>
          {busy() === "creating" ? "Starting…" : "New session"}
        </button>
      </header>
      <Show when={error()}>
        {(message) => (
          <p class="error" role="alert">
            {message()}
          </p>
        )}
      </Show>
      <Show when={sessions().length > 0} fallback={<p class="empty">No sessions yet. Start one with “New session”.</p>}>
        <ul class="sessions" aria-label="Sessions">
          <For each={sessions()}>{(session) => <SessionRow session={session} />}</For>
        </ul>
      </Show>
    </main>
  );
}

function SessionRow(props: { session: SessionInfo }) {
  const status = () =>
    props.session.status === "running" ? "running" : `exited (${props.session.exitCode ?? "?"})`;
  return (
    <li class="session" data-session-id={props.session.id}>
      <div class="session__head">
        <span class="session__title">{props.session.title}</span>
        <span class={`badge badge--${props.session.status}`}>{status()}</span>
      </div>
      <code class="session__command">{props.session.command.join(" ")}</code>
    </li>
  );
}
