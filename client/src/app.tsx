import { createSignal, Match, onMount, Switch } from "solid-js";
import type { SessionInfo } from "../../server/contract/types.ts";
import { createApi, describeError, isUnauthorized } from "./api.ts";
import { Login } from "./views/Login.tsx";
import { SessionList } from "./views/SessionList.tsx";

type View =
  | { name: "checking" }
  | { name: "login" }
  | { name: "sessions"; sessions: SessionInfo[] }
  | { name: "unreachable"; message: string };

/**
 * Normally the server consumes `/?token=…` itself (cookie, then a redirect to `/`).
 * When the page was served without reaching the server (a cached app shell), the
 * token is still in the address bar: take it out at once so it is neither kept in
 * history nor shared, and log in with it.
 */
function takeTokenFromAddress(): string | null {
  const url = new URL(window.location.href);
  const token = url.searchParams.get("token");
  if (token === null) return null;
  url.searchParams.delete("token");
  window.history.replaceState(window.history.state, "", url.pathname + url.search + url.hash);
  return token;
}

export function App() {
  const [view, setView] = createSignal<View>({ name: "checking" });
  const api = createApi({ onUnauthorized: () => setView({ name: "login" }) });

  // Whether we are logged in is whatever GET /api/sessions says: the cookie is HttpOnly.
  async function probe() {
    setView({ name: "checking" });
    try {
      setView({ name: "sessions", sessions: await api.listSessions() });
    } catch (failure) {
      if (!isUnauthorized(failure)) setView({ name: "unreachable", message: describeError(failure) });
    }
  }

  onMount(async () => {
    const token = takeTokenFromAddress();
    if (token !== null) {
      try {
        await api.login(token);
      } catch {
        // A stale or wrong token in a link: the probe below shows Login.
      }
    }
    await probe();
  });

  return (
    <Switch>
      <Match when={view().name === "checking"}>
        <main class="page page--narrow" aria-busy="true">
          <p class="empty">Connecting…</p>
        </main>
      </Match>
      <Match when={view().name === "login"}>
        <Login api={api} onLoggedIn={probe} />
      </Match>
      <Match when={sessionsOf(view())}>
        {(sessions) => <SessionList api={api} initial={sessions()} />}
      </Match>
      <Match when={unreachableMessage(view())}>
        {(message) => (
          <main class="page page--narrow">
            <p class="error" role="alert">
              {message()}
            </p>
            <button class="button button--primary" type="button" onClick={probe}>
              Try again
            </button>
          </main>
        )}
      </Match>
    </Switch>
  );
}

function sessionsOf(view: View): SessionInfo[] | false {
  return view.name === "sessions" && view.sessions;
}

function unreachableMessage(view: View): string | false {
  return view.name === "unreachable" && view.message;
}
