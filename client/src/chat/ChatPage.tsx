/**
 * `/s/{id}/chat`: a hybrid session at its chat end, phone first. The transcript (chat-state.ts fed
 * by chat-connection.ts), what the agent waits for (ChatPrompts), a busy bar with Stop, and the
 * compose box with the same IndexedDB outbox as the terminal's. "Open terminal" moves the session;
 * a 4409 shows where it went and does not reconnect.
 */
import { createEffect, createMemo, createSignal, on, onCleanup, Show } from "solid-js";
import type { HybridState, SubmitStatusPayload } from "../../../server/contract/types.ts";
import { ApiError } from "../api.ts";
import { ComposeBox } from "../compose/ComposeBox.tsx";
import { ThemeIcon } from "../icons.tsx";
import type { SessionPageProps } from "../views/session-page.ts";
import type { ProbeResult } from "../terminal/connection.ts";
import { BackTitle } from "../views/BackTitle.tsx";
import { makeChatConnection, type ChatConnection, type ChatPhase } from "./chat-connection.ts";
import { chatComposeLink } from "./chat-link.ts";
import { applyChatEvent, capsOf, EMPTY_CHAT_STATE, isBusy, type ChatState, type ResolvedPermission } from "./chat-state.ts";
import { ChatPrompts } from "./ChatPrompts.tsx";
import { ChatTranscript } from "./ChatTranscript.tsx";
import { createMoveFlow, movedEnd } from "./move.ts";
import { MoveConfirm, MovedBanner } from "./MoveControls.tsx";
import "./chat.css";

/** Within this many pixels of the end the transcript follows new output; further up the reader stays put. */
export const STICK_TO_END_PX = 80;

export type ChatPageProps = SessionPageProps & {
  /** go to the terminal page (the session is, or was just moved, there) */
  onOpenTerminal: () => void;
};

const STATE_TEXT: Record<HybridState, string> = {
  starting: "starting…",
  idle: "ready",
  busy: "working…",
  awaiting_permission: "waiting for your answer",
  moving: "moving…",
  // Parked: no agent process right now; the next send starts one.
  parked: "ready",
};

const STOPPED_TEXT = {
  not_found: "This session no longer exists.",
  unauthorized: "Not logged in.",
  exited: "The session ended.",
  moved: "This session moved.",
} as const;

export function ChatPage(props: ChatPageProps) {
  const [chat, setChat] = createSignal<ChatState>(EMPTY_CHAT_STATE);
  const [phase, setPhase] = createSignal<ChatPhase>({ phase: "connecting", attempt: 0 });
  const [title, setTitle] = createSignal(props.sessionId);
  const [stopping, setStopping] = createSignal(false);
  const [viewportHeight, setViewportHeight] = createSignal<number | null>(null);
  const submissionListeners = new Set<(status: SubmitStatusPayload) => void>();
  let scroller!: HTMLDivElement;
  let stick = true;
  let resyncSent = false;

  const viewport = window.visualViewport;
  if (viewport) {
    // The on-screen keyboard shrinks the visual viewport: keep the compose box above it.
    const follow = () => setViewportHeight(viewport.height);
    viewport.addEventListener("resize", follow);
    onCleanup(() => viewport.removeEventListener("resize", follow));
  }

  async function probe(): Promise<ProbeResult> {
    try {
      await props.api.getSession(props.sessionId);
      return "ok";
    } catch (error) {
      if (error instanceof ApiError && error.code === "UNAUTHORIZED") return "unauthorized";
      if (error instanceof ApiError && error.code === "NOT_FOUND") return "not_found";
      return "ok";
    }
  }
  props.api.getSession(props.sessionId).then(
    (session) => setTitle(session.title),
    () => {}, // offline or gone: the socket says which
  );

  const connection: ChatConnection = makeChatConnection({
    sessionId: props.sessionId,
    clientId: props.clientId,
    label: props.label,
    since: () => chat().lastSeq,
    onEvent(event) {
      if (event.type === "submission") {
        const status: SubmitStatusPayload = { id: event.id, state: event.state, ...(event.error ? { error: event.error } : {}) };
        for (const listener of submissionListeners) listener(status);
        return;
      }
      const next = applyChatEvent(chat(), event);
      setChat(next);
      // Something did not add up (a delta for a part we lack): one fresh snapshot, not a stream of them.
      if (next.stale && !resyncSent) resyncSent = connection.send({ type: "resync" });
      if (!next.stale) resyncSent = false;
    },
    onPhase: setPhase,
    probe,
  });
  onCleanup(() => connection.dispose());

  const link = chatComposeLink(
    () => connection,
    phase,
    (listener) => {
      submissionListeners.add(listener);
      return () => submissionListeners.delete(listener);
    },
  );

  const live = () => phase().phase === "live";
  const busy = () => live() && isBusy(chat());
  createEffect(() => !busy() && setStopping(false));
  const moved = () => {
    const p = phase();
    return p.phase === "stopped" && p.reason === "moved" ? (movedEnd(p.detail) ?? "terminal") : null;
  };
  const toTerminal = createMoveFlow(props.api, props.sessionId, "terminal", () => props.onOpenTerminal());

  const resolvedByToolUse = createMemo(() => {
    const map = new Map<string, ResolvedPermission>();
    for (const r of Object.values(chat().resolved)) if (r.toolUseId) map.set(r.toolUseId, r);
    return map;
  });
  const waitingToolUses = createMemo(() => new Set(chat().permissions.flatMap((p) => (p.toolUseId ? [p.toolUseId] : []))));

  function respond(requestId: string, decision: "allow" | "deny", extra: { updatedInput?: unknown; message?: string } = {}): boolean {
    const { updatedInput, message } = extra;
    return connection.send({
      type: "permission.respond",
      requestId,
      decision,
      ...(updatedInput === undefined ? {} : { updatedInput }),
      ...(message === undefined ? {} : { message }),
    });
  }

  function stop(): void {
    if (connection.send({ type: "interrupt" })) setStopping(true);
  }

  // Follow the conversation while the reader is at its end.
  createEffect(
    on(
      () => [chat().messages, chat().permissions],
      () => {
        if (stick) scroller.scrollTop = scroller.scrollHeight;
      },
    ),
  );

  const agentName = () => {
    const agent = chat().hello?.agent ?? "agent";
    return agent.charAt(0).toUpperCase() + agent.slice(1);
  };

  return (
    <main
      class="chat-page"
      data-phase={phase().phase}
      data-state={chat().status?.state ?? ""}
      style={viewportHeight() === null ? undefined : { height: `${viewportHeight()}px` }}
    >
      <header class="term-bar">
        <BackTitle title={title()} onBack={props.onBack} />
        <button
          class="button button--small"
          type="button"
          disabled={toTerminal.moving() || moved() !== null}
          title="Move the conversation to the agent's terminal"
          onClick={() => toTerminal.start()}
        >
          {toTerminal.moving() ? "Opening…" : "Open terminal"}
        </button>
        <button class="icon-button" type="button" aria-label="Toggle theme" title="Toggle dark/light" onClick={() => props.theme.toggle()}>
          <ThemeIcon />
        </button>
      </header>
      <Show when={moved()} fallback={<ChatStatusLine phase={phase()} chat={chat()} agent={agentName()} moveError={toTerminal.error()} />}>
        {(end) => <MovedBanner end={end()} onFollow={() => (end() === "terminal" ? props.onOpenTerminal() : connection.reconnect())} />}
      </Show>
      <div
        class="chat-scroll"
        ref={scroller}
        onScroll={() => (stick = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < STICK_TO_END_PX)}
      >
        <div class="chat-log" aria-label="Conversation" role="log">
          <Show when={capsOf(chat()).sandbox}>
            {(sandbox) => (
              <p class="chat-sandbox" role="note" aria-label="What the agent may do">
                {sandbox()}
              </p>
            )}
          </Show>
          <ChatTranscript messages={chat().messages} resolvedByToolUse={resolvedByToolUse()} waitingToolUses={waitingToolUses()} busy={busy()} />
          <Show when={live() && chat().lastSeq !== null && chat().messages.length === 0}>
            <p class="empty">No messages yet. Write below to start.</p>
          </Show>
        </div>
      </div>
      <Show when={live() && chat().permissions.length > 0}>
        <div class="chat-prompts">
          <ChatPrompts permissions={chat().permissions} respond={respond} />
        </div>
      </Show>
      <Show when={busy()}>
        <div class="chat-busy" role="status" aria-label="The agent is working">
          <span class="chat-busy__dot" aria-hidden="true" />
          <span class="chat-busy__text">{chat().status?.state === "awaiting_permission" ? "Waiting for your answer" : "Working…"}</span>
          <Show when={capsOf(chat()).interrupt}>
            <button class="button button--small button--danger" type="button" disabled={stopping()} onClick={stop}>
              {stopping() ? "Stopping…" : "Stop"}
            </button>
          </Show>
        </div>
      </Show>
      <ComposeBox sessionId={props.sessionId} link={link} />
      <MoveConfirm flow={toTerminal} to="terminal" />
    </main>
  );
}

function ChatStatusLine(props: { phase: ChatPhase; chat: ChatState; agent: string; moveError: string | null }) {
  const text = () => {
    const p = props.phase;
    if (p.phase === "connecting") return "Connecting…";
    if (p.phase === "waiting") return p.offline ? "Offline — will reconnect" : "Reconnecting…";
    if (p.phase === "stopped") return STOPPED_TEXT[p.reason];
    const state = props.chat.status?.state;
    return `${props.agent} · ${state ? STATE_TEXT[state] : "…"}`;
  };
  const lastTurn = () => {
    const status = props.chat.lastTurn?.status;
    return status === "interrupted" ? "last turn interrupted" : status === "error" ? "last turn failed" : null;
  };
  const problem = () => props.moveError ?? props.chat.refused?.message ?? props.chat.status?.error ?? null;
  return (
    <div class="term-status chat-status" role="status" aria-live="polite">
      <span class="term-status__text" classList={{ "term-status__text--restoring": props.phase.phase !== "live" && props.phase.phase !== "stopped" }}>
        {text()}
        <Show when={lastTurn()}>
          <span class="chat-status__turn"> · {lastTurn()}</span>
        </Show>
      </span>
      <Show when={problem()}>
        <span class="term-status__error chat-status__error">{problem()}</span>
      </Show>
    </div>
  );
}
