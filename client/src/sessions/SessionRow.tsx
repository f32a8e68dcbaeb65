import { createSignal, For, Match, Show, Switch } from "solid-js";
import type { HybridInfo, SessionInfo } from "../../../server/contract/types.ts";
import { describeError, isUnauthorized, type Api } from "../api.ts";
import type { SessionFeed } from "./session-feed.ts";
import { ErrorAlert } from "../views/ErrorAlert.tsx";

type Mode = "view" | "renaming" | "confirmDelete";

/** "Chrome on Linux controls · 2 watching", from the server's point of view. */
export function describeAudience(session: SessionInfo, clientId: string): string {
  const controller = session.controller;
  const who = controller === null ? null : controller.clientId === clientId ? "This tab" : controller.label || "Another device";
  const watching = session.clients - (controller === null ? 0 : 1);
  const parts: string[] = [];
  if (who !== null) parts.push(`${who} controls`);
  if (watching > 0) parts.push(`${watching} watching`);
  else if (session.clients === 0) parts.push("Nobody attached");
  return parts.join(" · ");
}

/** A hybrid session's end and state in a few words, "chat · needs you" (the agent is its command). */
export function describeHybrid(hybrid: HybridInfo): string {
  return `${hybrid.end} · ${HYBRID_STATE_TEXT[hybrid.state]}`;
}

const HYBRID_STATE_TEXT: Record<HybridInfo["state"], string> = {
  starting: "starting",
  idle: "idle",
  busy: "working",
  awaiting_permission: "needs you",
  moving: "moving",
  parked: "idle",
};

export type SessionRowProps = {
  session: SessionInfo;
  api: Api;
  feed: SessionFeed;
  clientId: string;
  /** open the session's page: its chat when `page` says so (a hybrid session at its chat end) */
  onOpen: (id: string, page?: "chat") => void;
};

export function SessionRow(props: SessionRowProps) {
  const [mode, setMode] = createSignal<Mode>("view");
  const [title, setTitle] = createSignal("");
  const [busy, setBusy] = createSignal(false);
  const [error, setError] = createSignal<string | null>(null);
  const s = () => props.session;
  const atChat = () => s().hybrid?.end === "chat";
  const href = () => (atChat() ? `/s/${s().id}/chat` : `/s/${s().id}`);
  const status = () => (s().status === "running" ? "running" : `exited (${s().exitCode ?? "?"})`);

  async function act(action: () => Promise<void>) {
    if (busy()) return;
    setBusy(true);
    setError(null);
    try {
      await action();
      setMode("view");
    } catch (failure) {
      if (!isUnauthorized(failure)) setError(describeError(failure));
    } finally {
      setBusy(false);
    }
  }

  const rename = (event: SubmitEvent) => {
    event.preventDefault();
    const next = title().trim();
    if (next === "") return;
    void act(async () => props.feed.apply(await props.api.renameSession(s().id, next)));
  };
  const restart = () => act(async () => props.feed.apply(await props.api.restartSession(s().id)));
  const remove = () =>
    act(async () => {
      await props.api.deleteSession(s().id);
      props.feed.forget(s().id);
    });

  return (
    <li class="session" classList={{ "session--attention": s().attention }} data-session-id={s().id}>
      <a
        class="session__main"
        href={href()}
        onClick={(event) => {
          if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
          event.preventDefault();
          if (atChat()) props.onOpen(s().id, "chat");
          else props.onOpen(s().id);
        }}
      >
        <div class="session__head">
          <span class="session__title">{s().title}</span>
          <Show when={s().attention}>
            <span class="badge badge--attention" title="The program rang the bell or sent a notification">attention</span>
          </Show>
          <Show when={s().hybrid} fallback={<span class={`badge badge--${s().status}`}>{status()}</span>}>
            {(hybrid) => (
              <span class="badge badge--hybrid" data-end={hybrid().end} data-state={hybrid().state} title={hybrid().error ?? "A coding agent's conversation: terminal or chat"}>
                {describeHybrid(hybrid())}
              </span>
            )}
          </Show>
        </div>
        <code class="session__command">{s().command.join(" ")}</code>
        <Show when={s().preview.length > 0}>
          <div class="session__preview" aria-label="Last lines">
            <For each={s().preview}>{(line) => <div>{line}</div>}</For>
          </div>
        </Show>
        <span class="session__meta">{describeAudience(s(), props.clientId)}</span>
      </a>
      <Switch>
        <Match when={mode() === "view"}>
          <div class="session__actions">
            <button class="link-button" type="button" onClick={() => (setTitle(s().title), setMode("renaming"))}>
              Rename
            </button>
            {/* A hybrid session is moved between its ends, never restarted (the server refuses it). */}
            <Show when={!s().hybrid}>
              <button class="link-button" type="button" disabled={busy()} onClick={restart}>
                Restart
              </button>
            </Show>
            <button class="link-button link-button--danger" type="button" onClick={() => setMode("confirmDelete")}>
              Delete
            </button>
          </div>
        </Match>
        <Match when={mode() === "renaming"}>
          <form class="session__actions session__actions--form" onSubmit={rename}>
            <input
              class="input"
              aria-label="New title"
              value={title()}
              maxLength={200}
              autofocus
              onInput={(event) => setTitle(event.currentTarget.value)}
              onKeyDown={(event) => event.key === "Escape" && setMode("view")}
            />
            <button class="button button--primary button--small" type="submit" disabled={busy() || title().trim() === ""}>
              Save
            </button>
            <button class="button button--small" type="button" onClick={() => setMode("view")}>
              Cancel
            </button>
          </form>
        </Match>
        <Match when={mode() === "confirmDelete"}>
          <div class="session__actions session__actions--confirm" role="group" aria-label="Confirm delete">
            <span class="session__confirm">Delete it and end its program?</span>
            <button class="button button--danger button--small" type="button" disabled={busy()} onClick={remove}>
              Delete
            </button>
            <button class="button button--small" type="button" onClick={() => setMode("view")}>
              Cancel
            </button>
          </div>
        </Match>
      </Switch>
      <ErrorAlert message={error()} inline />
    </li>
  );
}
