import { createSignal, onCleanup, onMount, Show } from "solid-js";
import { describeError, isUnauthorized } from "../api.ts";
import { createMoveFlow, movedEnd } from "../chat/move.ts";
import { MoveConfirm, MovedBanner } from "../chat/MoveControls.tsx";
import { ComposeBox } from "../compose/ComposeBox.tsx";
import { terminalComposeLink } from "../compose/terminal-link.ts";
import { KeyBar } from "../keys/KeyBar.tsx";
import { CopyIcon, SearchIcon, ThemeIcon } from "../icons.tsx";
import type { SessionPageProps } from "../views/session-page.ts";
import { BackTitle } from "../views/BackTitle.tsx";
import { exposeTerminal } from "./debug-hook.ts";
import { FindBar } from "./FindBar.tsx";
import { StatusLine } from "./StatusLine.tsx";
import { createTerminalView, type TerminalView } from "./terminal-view.ts";

/** How long "Copied" stays in the status line. */
export const NOTICE_MS = 2_500;

export type TerminalPageProps = SessionPageProps & {
  /** go to the chat page of this (hybrid) session */
  onOpenChat: () => void;
};

/** Touch screens get no automatic focus: it would pop the on-screen keyboard over the screen. */
const finePointer = () => window.matchMedia("(pointer: fine)").matches;

const KEY_BAR_SETTING = "webmux.keyBar";
/** The key bar shows on touch screens unless turned off; elsewhere when turned on. */
const keyBarWanted = () => (localStorage.getItem(KEY_BAR_SETTING) ?? (finePointer() ? "off" : "on")) === "on";

export function TerminalPage(props: TerminalPageProps) {
  let host!: HTMLDivElement;
  const [view, setView] = createSignal<TerminalView | null>(null);
  const [finding, setFinding] = createSignal(false);
  const [notice, setNotice] = createSignal<string | null>(null);
  const [copyText, setCopyText] = createSignal<string | null>(null);
  const [keyBar, setKeyBar] = createSignal(keyBarWanted());
  const [viewportHeight, setViewportHeight] = createSignal<number | null>(null);
  // The on-screen keyboard shrinks the visual viewport, not the layout one: fit the page to it so
  // the terminal, key bar and compose box stay above the keyboard.
  const viewport = window.visualViewport;
  if (viewport) {
    const follow = () => setViewportHeight(viewport.height);
    viewport.addEventListener("resize", follow);
    onCleanup(() => viewport.removeEventListener("resize", follow));
  }
  let noticeTimer: ReturnType<typeof setTimeout> | null = null;

  onMount(() => {
    const created = createTerminalView({
      sessionId: props.sessionId,
      clientId: props.clientId,
      label: props.label,
      dark: props.theme.dark,
      host,
      api: props.api,
    });
    setView(created);
    onCleanup(exposeTerminal(props.sessionId, props.clientId, created));
    if (finePointer()) created.focus();
  });
  onCleanup(() => noticeTimer !== null && clearTimeout(noticeTimer));

  function say(message: string) {
    setNotice(message);
    if (noticeTimer !== null) clearTimeout(noticeTimer);
    noticeTimer = setTimeout(() => setNotice(null), NOTICE_MS);
  }

  async function copyAll() {
    const current = view();
    if (!current) return;
    say("Copying…");
    let text: string;
    try {
      text = await current.copyAll();
    } catch (failure) {
      if (!isUnauthorized(failure)) say(describeError(failure));
      return;
    }
    try {
      await navigator.clipboard.writeText(text);
      say(`Copied ${text.split("\n").length - 1} lines`);
    } catch {
      // No clipboard access (plain http on a LAN address is not a secure context): show it to copy by hand.
      setNotice(null);
      setCopyText(text);
    }
  }

  const title = () => view()?.session()?.title ?? props.sessionId;
  // A hybrid session: "Continue in chat" while its agent runs here; a 4409 says where it went.
  const moved = () => {
    const phase = view()?.phase();
    return phase?.phase === "stopped" && phase.reason === "moved" ? (movedEnd(phase.detail) ?? "chat") : null;
  };
  const atTerminalEnd = () => view()?.session()?.hybrid?.end === "terminal" && moved() === null;
  const toChat = createMoveFlow(props.api, props.sessionId, "chat", () => props.onOpenChat());

  return (
    <main class="term-page" style={viewportHeight() === null ? undefined : { height: `${viewportHeight()}px` }}>
      <header class="term-bar">
        <BackTitle title={title()} onBack={props.onBack} />
        <Show when={atTerminalEnd()}>
          <button class="button button--small" type="button" disabled={toChat.moving()} title="Move the conversation to the chat view" onClick={() => toChat.start()}>
            {toChat.moving() ? "Moving…" : "Continue in chat"}
          </button>
        </Show>
        <button class="icon-button" type="button" aria-label="Find" aria-pressed={finding()} onClick={() => setFinding(!finding())}>
          <SearchIcon />
        </button>
        <button class="icon-button" type="button" aria-label="Copy all" title="Copy all output as text" onClick={copyAll}>
          <CopyIcon />
        </button>
        <button
          class="icon-button"
          type="button"
          aria-label="Key bar"
          aria-pressed={keyBar()}
          title="Show or hide the key bar"
          onClick={() => {
            localStorage.setItem(KEY_BAR_SETTING, keyBar() ? "off" : "on");
            setKeyBar(!keyBar());
          }}
        >
          ⌨
        </button>
        <button class="icon-button" type="button" aria-label="Toggle theme" title="Toggle dark/light" onClick={() => props.theme.toggle()}>
          <ThemeIcon />
        </button>
      </header>
      <Show when={moved()} fallback={<Show when={view()}>{(current) => <StatusLine view={current()} notice={notice() ?? toChat.error()} onBack={props.onBack} />}</Show>}>
        {(end) => <MovedBanner end={end()} onFollow={() => (end() === "chat" ? props.onOpenChat() : view()?.connection()?.reconnect())} />}
      </Show>
      <Show when={finding() && view()}>
        {(current) => (
          <FindBar
            view={current()}
            onClose={() => {
              setFinding(false);
              current().clearFind();
              current().focus();
            }}
          />
        )}
      </Show>
      <div class="term-box">
        <div class="term-host" classList={{ "term-host--offscreen": view()?.writingScreen() ?? false }} ref={host} />
        <Show when={view()?.replaying()}>
          <div class="term-overlay" role="status">
            Restoring…
          </div>
        </Show>
      </div>
      <Show when={keyBar() && view()}>{(current) => <KeyBar view={current()} />}</Show>
      <Show when={view()}>{(current) => <ComposeBox sessionId={props.sessionId} link={terminalComposeLink(current())} />}</Show>
      <MoveConfirm flow={toChat} to="chat" />
      <Show when={copyText()}>
        {(text) => (
          <div class="dialog-backdrop" role="dialog" aria-modal="true" aria-label="All output">
            <div class="dialog">
              <p class="hint">The browser does not allow copying here. Select the text and copy it.</p>
              <textarea class="dialog__text" readonly ref={(el) => queueMicrotask(() => el.select())}>
                {text()}
              </textarea>
              <button class="button button--primary" type="button" onClick={() => setCopyText(null)}>
                Close
              </button>
            </div>
          </div>
        )}
      </Show>
    </main>
  );
}
