/**
 * Settings: this device (label, theme, font size), Notifications (asked for here, from the user's
 * click, never on load), Network (WebSocket compression, device-local),
 * the server's settings from `/ws/settings` (Agent API on/off) and the Agent API's tokens.
 */
import { createResource, createSignal, For, Show } from "solid-js";
import { CAPABILITIES, type Capability, type CreateTokenResponse } from "../../../server/contract/types.ts";
import { describeError, type Api } from "../api.ts";
import { notificationStateSignal, requestNotifications, type NotificationState } from "../notify/permission.ts";
import { FONT_SIZE_RANGE, loadCompress, loadFontSize, saveCompress, saveFontSize } from "../storage/device-settings.ts";
import type { Theme } from "../storage/theme.ts";
import { createServerSettings } from "./server-settings.ts";
import { ErrorAlert } from "../views/ErrorAlert.tsx";

/** Expiry choices for a new token, in seconds (null: never expires). */
/** What each capability lets a token do, as the form says it (docs/agent-api.md, Tokens and capabilities). */
const CAPABILITY_HINTS: Record<Capability, string> = {
  "terminal:read": "list sessions, watch terminals, read screens",
  "terminal:write": "type, run commands, create and end sessions — and read, since what it runs answers with the output",
};

const EXPIRIES: readonly { label: string; seconds: number | null }[] = [
  { label: "1 day", seconds: 86_400 },
  { label: "7 days", seconds: 7 * 86_400 },
  { label: "30 days", seconds: 30 * 86_400 },
  { label: "never", seconds: null },
];

export type SettingsPageProps = {
  api: Api;
  label: () => string;
  setLabel: (label: string) => void;
  theme: Theme;
  onBack: () => void;
};

export function SettingsPage(props: SettingsPageProps) {
  const [compress, setCompress] = createSignal(loadCompress());
  const [fontSize, setFontSize] = createSignal(loadFontSize());
  const server = createServerSettings();
  const [error, setError] = createSignal<string | null>(null);
  const [tokens, { refetch }] = createResource(() => props.api.listTokens().catch((failure) => (setError(describeError(failure)), [])));
  const [created, setCreated] = createSignal<CreateTokenResponse | null>(null);
  const [name, setName] = createSignal("");
  const [capabilities, setCapabilities] = createSignal<Capability[]>(["terminal:read"]);
  const [expiry, setExpiry] = createSignal(0);

  async function attempt(action: () => Promise<unknown>): Promise<void> {
    setError(null);
    try {
      await action();
    } catch (failure) {
      setError(describeError(failure));
    }
  }

  async function createToken(): Promise<void> {
    const seconds = EXPIRIES[expiry()]!.seconds;
    await attempt(async () => {
      setCreated(
        await props.api.createToken({ name: name().trim(), capabilities: capabilities(), ...(seconds === null ? {} : { expires_in: seconds }) }),
      );
      setName("");
      await refetch();
    });
  }

  return (
    <main class="page page--narrow settings">
      <header class="toolbar">
        <a class="button" href="/" onClick={(event) => (event.preventDefault(), props.onBack())}>
          Back
        </a>
        <h1 class="toolbar__title">Settings</h1>
      </header>
      <ErrorAlert message={error()} />

      <section class="card" aria-label="Device">
        <h2>This device</h2>
        <label class="field">
          <span>Device label</span>
          <input value={props.label()} autocomplete="off" onChange={(event) => props.setLabel(event.currentTarget.value)} />
        </label>
        <button class="button" type="button" onClick={() => props.theme.toggle()}>
          Theme: {props.theme.dark() ? "dark" : "light"}
        </button>
        <label class="field">
          <span>Terminal font size</span>
          <select
            aria-label="Terminal font size"
            value={String(fontSize() ?? "")}
            onChange={(event) => setFontSize(saveFontSize(event.currentTarget.value === "" ? null : Number(event.currentTarget.value)))}
          >
            <option value="">automatic</option>
            <For each={Array.from({ length: FONT_SIZE_RANGE.max - FONT_SIZE_RANGE.min + 1 }, (_, i) => FONT_SIZE_RANGE.min + i)}>
              {(size) => <option value={String(size)}>{size} px</option>}
            </For>
          </select>
        </label>
      </section>

      <Notifications />

      <section class="card" aria-label="Network">
        <h2>Network</h2>
        <label class="check">
          <input type="checkbox" checked={compress()} onChange={(event) => setCompress(saveCompress(event.currentTarget.checked))} />
          <span>Compress WebSocket traffic (fewer bytes on slow links; applies to new connections)</span>
        </label>
      </section>

      <section class="card" aria-label="Server">
        <h2>Server</h2>
        <label class="check">
          <input
            type="checkbox"
            aria-label="Agent API"
            disabled={server() === null}
            checked={server()?.open_api.enabled ?? false}
            onChange={(event) => {
              const enabled = event.currentTarget.checked;
              void attempt(() => props.api.putSettings({ open_api: { enabled } }));
            }}
          />
          <span>Agent API {server() === null ? "(loading…)" : server()!.open_api.enabled ? "on" : "off"}</span>
        </label>
      </section>

      <section class="card" aria-label="Tokens">
        <h2>Tokens</h2>
        <Show when={created()}>
          {(fresh) => (
            <div class="token-secret" role="status">
              <p>Token “{fresh().token_info.name}” — copy it now, it is not shown again:</p>
              <code class="token-secret__value">{fresh().token}</code>
              <button class="button button--small" type="button" onClick={() => setCreated(null)}>
                Done
              </button>
            </div>
          )}
        </Show>
        <form class="create" onSubmit={(event) => (event.preventDefault(), void createToken())}>
          <label class="field">
            <span>Name</span>
            <input aria-label="Token name" value={name()} required autocomplete="off" onInput={(event) => setName(event.currentTarget.value)} />
          </label>
          <For each={CAPABILITIES}>
            {(capability) => (
              <label class="check">
                <input
                  type="checkbox"
                  checked={capabilities().includes(capability)}
                  onChange={(event) =>
                    setCapabilities((list) => (event.currentTarget.checked ? [...list, capability] : list.filter((c) => c !== capability)))
                  }
                />
                <span>
                  {capability} <span class="hint">{CAPABILITY_HINTS[capability]}</span>
                </span>
              </label>
            )}
          </For>
          <p class="hint">Agent tokens work only while the Agent API is on; switching it off closes what they have open.</p>
          <label class="field">
            <span>Expires after</span>
            <select aria-label="Expires after" value={String(expiry())} onChange={(event) => setExpiry(Number(event.currentTarget.value))}>
              <For each={EXPIRIES}>{(choice, index) => <option value={String(index())}>{choice.label}</option>}</For>
            </select>
          </label>
          <button class="button button--primary" type="submit">
            Create token
          </button>
        </form>
        <ul class="token-list">
          <For each={tokens() ?? []}>
            {(token) => (
              <li class="token" data-token-id={token.id}>
                <span class="token__name">{token.name}</span>
                <span class="hint">
                  {token.capabilities.join(", ")} · {token.expires_at === null ? "never expires" : `expires ${new Date(token.expires_at).toLocaleString()}`}
                </span>
                <button
                  class="button button--small button--danger"
                  type="button"
                  onClick={() => {
                    if (window.confirm(`Revoke “${token.name}”? Programs using it stop working.`)) {
                      void attempt(async () => (await props.api.revokeToken(token.id), await refetch()));
                    }
                  }}
                >
                  Revoke
                </button>
              </li>
            )}
          </For>
        </ul>
      </section>
    </main>
  );
}

const NOTIFICATION_TEXT: Record<NotificationState, string> = {
  on: "on — a session that asks for attention (its bell) while the app is in the background shows a notification; tapping it opens the session",
  off: "off",
  blocked: "blocked — allow notifications for this site in the browser's settings",
  unsupported: "not supported by this browser",
};

/** The permission is asked only from this button (a user gesture), once: "blocked" is the browser's to undo. */
function Notifications() {
  const state = notificationStateSignal();
  return (
    <section class="card" aria-label="Notifications">
      <h2>Notifications</h2>
      <p class="hint" data-state={state()}>
        Notifications: {NOTIFICATION_TEXT[state()]}
      </p>
      <Show when={state() === "off"}>
        <button class="button button--primary" type="button" onClick={() => void requestNotifications()}>
          Turn on notifications
        </button>
      </Show>
    </section>
  );
}
