import { createEffect, createSignal, lazy, Match, onCleanup, onMount, Switch } from "solid-js";
import type { SessionInfo } from "../../server/contract/types.ts";
import { isValidSessionId } from "../../server/contract/protocol.ts";
import { createApi, describeError, isUnauthorized } from "./api.ts";
import { listenForOpenSession, watchAttention } from "./notify/attention-watcher.ts";
import { SettingsPage } from "./settings/SettingsPage.tsx";
import { createSessionFeed } from "./sessions/session-feed.ts";
import { SessionListPage } from "./sessions/SessionListPage.tsx";
import { loadSessionList } from "./storage/session-list-store.ts";
import { loadDeviceLabel, saveDeviceLabel } from "./storage/tab-identity.ts";
import { createTheme } from "./storage/theme.ts";
import { TerminalPage } from "./terminal/TerminalPage.tsx";
import { Login } from "./views/Login.tsx";

/** The chat view (and its Markdown renderer) loads when first opened: the list and terminal do not carry it. The service worker precaches it for offline use. */
const ChatPage = lazy(() => import("./chat/ChatPage.tsx").then((m) => ({ default: m.ChatPage })));

type View =
  | { name: "checking" }
  | { name: "login" }
  /** `sessions` null: not fetched (a terminal opened directly); the list's socket brings them */
  | { name: "ready"; sessions: SessionInfo[] | null }
  | { name: "unreachable"; message: string };

/** Where the address bar points: `/` is the list, `/s/{id}` a terminal, `/s/{id}/chat` a hybrid session's chat. */
export type Route = { name: "list" } | { name: "settings" } | { name: "terminal"; id: string } | { name: "chat"; id: string };

export function routeOf(pathname: string): Route {
  if (/^\/settings\/?$/.test(pathname)) return { name: "settings" };
  const match = /^\/s\/([^/]+)(\/chat)?\/?$/.exec(pathname);
  if (!match || !isValidSessionId(match[1])) return { name: "list" };
  return { name: match[2] ? "chat" : "terminal", id: match[1] };
}

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

export function App(props: { clientId: string }) {
  const [view, setView] = createSignal<View>({ name: "checking" });
  const [route, setRoute] = createSignal<Route>(routeOf(window.location.pathname));
  const [label, setLabel] = createSignal(loadDeviceLabel());
  const theme = createTheme();
  const api = createApi({ onUnauthorized: () => setView({ name: "login" }) });

  createEffect(() => {
    document.documentElement.dataset.theme = theme.dark() ? "dark" : "light";
  });

  const onPopState = () => setRoute(routeOf(window.location.pathname));
  window.addEventListener("popstate", onPopState);
  onCleanup(() => window.removeEventListener("popstate", onPopState));

  function navigate(path: string) {
    if (window.location.pathname !== path) window.history.pushState(null, "", path);
    setRoute(routeOf(path));
  }
  // A tapped notification: the service worker focused this window and names the session.
  listenForOpenSession(navigate);

  // Whether we are logged in is whatever GET /api/sessions says: the cookie is HttpOnly.
  async function probe() {
    setView({ name: "checking" });
    try {
      setView({ name: "ready", sessions: await api.listSessions() });
    } catch (failure) {
      if (isUnauthorized(failure)) return;
      // Offline (or the server is down): the last list this device saw; the list keeps reconnecting.
      const cached = await loadSessionList();
      setView(cached ? { name: "ready", sessions: cached } : { name: "unreachable", message: describeError(failure) });
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
    } else if (route().name === "terminal" || route().name === "chat") {
      // Paint the terminal or chat without a round trip first: its socket reports a 401 (through the Api).
      setView({ name: "ready", sessions: null });
      return;
    }
    await probe();
  });

  const currentRoute = route;
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
      <Match when={readySessions(view())}>
        {(sessions) => {
          // One session list feed wherever the user is: the list shows it, the watcher notifies.
          const feed = createSessionFeed(api, sessions().initial);
          watchAttention(feed);
          // What both ends of a session (terminal and chat page) are given.
          const sessionPage = (id: string) => ({
            api,
            sessionId: id,
            clientId: props.clientId,
            label,
            theme,
            onBack: () => navigate("/"),
          });
          return (
            <Switch>
              {/* keyed: another session is another page, with its own terminal and connection */}
              <Match when={terminalId(currentRoute())} keyed>
                {(id) => <TerminalPage {...sessionPage(id)} onOpenChat={() => navigate(`/s/${id}/chat`)} />}
              </Match>
              <Match when={chatId(currentRoute())} keyed>
                {(id) => <ChatPage {...sessionPage(id)} onOpenTerminal={() => navigate(`/s/${id}`)} />}
              </Match>
              <Match when={currentRoute().name === "settings"}>
                <SettingsPage
                  api={api}
                  label={label}
                  setLabel={(next) => setLabel(saveDeviceLabel(next))}
                  theme={theme}
                  onBack={() => navigate("/")}
                />
              </Match>
              <Match when={currentRoute().name === "list"}>
                <SessionListPage
                  api={api}
                  initial={sessions().initial}
                  feed={feed}
                  clientId={props.clientId}
                  label={label}
                  setLabel={(next) => setLabel(saveDeviceLabel(next))}
                  theme={theme}
                  onOpen={(id: string, page?: "chat") => navigate(page === "chat" ? `/s/${id}/chat` : `/s/${id}`)}
                  onSettings={() => navigate("/settings")}
                />
              </Match>
            </Switch>
          );
        }}
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

function readySessions(view: View): { initial: SessionInfo[] | null } | false {
  return view.name === "ready" && { initial: view.sessions };
}

function terminalId(route: Route): string | false {
  return route.name === "terminal" && route.id;
}

function chatId(route: Route): string | false {
  return route.name === "chat" && route.id;
}

function unreachableMessage(view: View): string | false {
  return view.name === "unreachable" && view.message;
}
