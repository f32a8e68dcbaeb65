import { createSignal } from "solid-js";
import { describeError, isUnauthorized, type Api } from "../api.ts";
import { ErrorAlert } from "./ErrorAlert.tsx";

/**
 * The token as typed or pasted. `webmux serve` prints a login URL
 * (`http://host:port/?token=…`), so pasting the whole URL works too.
 */
export function tokenFromInput(text: string): string {
  const trimmed = text.trim();
  if (!/^https?:\/\//i.test(trimmed)) return trimmed;
  try {
    return new URL(trimmed).searchParams.get("token") ?? trimmed;
  } catch {
    return trimmed;
  }
}

export function Login(props: { api: Api; onLoggedIn: () => void }) {
  const [token, setToken] = createSignal("");
  const [pending, setPending] = createSignal(false);
  const [error, setError] = createSignal<string | null>(null);

  async function submit(event: SubmitEvent) {
    event.preventDefault();
    const value = tokenFromInput(token());
    if (value === "" || pending()) return;
    setPending(true);
    setError(null);
    try {
      await props.api.login(value);
      setToken("");
      props.onLoggedIn();
    } catch (failure) {
      setError(isUnauthorized(failure) ? "That token was not accepted. Check it and try again." : describeError(failure));
    } finally {
      setPending(false);
    }
  }

  return (
    <main class="page page--narrow">
      <h1 class="brand">webmux</h1>
      <form class="card login" onSubmit={submit} aria-labelledby="login-title">
        <h2 id="login-title">Log in</h2>
        <p class="hint">
          Paste the token (or the whole login URL) that <code>webmux serve</code> printed.
        </p>
        <label class="field">
          <span>Access token</span>
          <input
            type="password"
            name="token"
            autocomplete="current-password"
            autocapitalize="off"
            spellcheck={false}
            required
            value={token()}
            onInput={(event) => {
              setToken(event.currentTarget.value);
              setError(null);
            }}
          />
        </label>
        <ErrorAlert message={error()} />
        <button class="button button--primary" type="submit" disabled={pending() || token().trim() === ""}>
          {pending() ? "Logging in…" : "Log in"}
        </button>
      </form>
    </main>
  );
}
