/**
 * The session list, live from `/ws/sessions`: a snapshot on connect, then created / updated /
 * removed. The socket reconnects through the shared reconnect loop; one that cannot open falls back on
 * `GET /api/sessions` (which also reports a 401, sending the app to Login). Create inside a Solid
 * owner; it closes on cleanup.
 */
import { withCompression } from "../storage/device-settings.ts";
import { saveSessionList } from "../storage/session-list-store.ts";
import { createSignal, onCleanup, type Accessor } from "solid-js";
import { decodeSessionListEvent } from "../../../server/contract/session-list.ts";
import type { SessionInfo, SessionListEvent } from "../../../server/contract/types.ts";
import { isUnauthorized, type Api } from "../api.ts";
import { makeReconnectLoop, type ProbeResult } from "../net/reconnect-loop.ts";
import { pruneScreens } from "../storage/screen-store.ts";
import { unreachable } from "../../../server/contract/unreachable.ts";

export const SESSION_LIST_PATH = "/ws/sessions";

export type SessionFeed = {
  sessions: Accessor<SessionInfo[]>;
  /** the socket is open and its snapshot arrived */
  live: Accessor<boolean>;
  /** some list (initial, snapshot or HTTP fallback) has arrived: an empty list means "none" */
  known: Accessor<boolean>;
  /** an HTTP answer about one session (create, rename, restart): shown unless the feed knows newer */
  apply(session: SessionInfo): void;
  forget(id: string): void;
};

const byCreation = (a: SessionInfo, b: SessionInfo) => a.createdAt - b.createdAt || a.id.localeCompare(b.id);

/** The list after one event; pure, so the order rules are in one place. */
export function applySessionEvent(list: SessionInfo[], event: SessionListEvent): SessionInfo[] {
  switch (event.type) {
    case "snapshot":
      return [...event.sessions].sort(byCreation);
    case "created":
    case "updated":
      return [...list.filter((s) => s.id !== event.session.id), event.session].sort(byCreation);
    case "removed":
      return list.filter((s) => s.id !== event.id);
    default:
      return unreachable(event, "session list event");
  }
}

export function sessionListUrl(base: string = window.location.href): string {
  const url = new URL(SESSION_LIST_PATH, base);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  return withCompression(url.toString());
}

export function createSessionFeed(api: Api, initial: SessionInfo[] | null = null): SessionFeed {
  const [sessions, setSessions] = createSignal<SessionInfo[]>([...(initial ?? [])].sort(byCreation));
  const [live, setLive] = createSignal(false);
  const [known, setKnown] = createSignal(initial !== null);
  const loop = makeReconnectLoop<never>({
    stats: { opens: 0, waits: 0 },
    open() {
      const ws = new WebSocket(sessionListUrl());
      ws.onmessage = (message) => {
        if (typeof message.data !== "string") return;
        const event = decodeSessionListEvent(message.data);
        if (event.type === "invalid") {
          console.warn("webmux: ignoring a session list message:", event.detail);
          return;
        }
        setSessions((list) => applySessionEvent(list, event));
        // What the app shows when it is opened offline.
        void saveSessionList(sessions()).catch(() => undefined);
        if (event.type === "snapshot") {
          loop.markLive();
          setLive(true);
          setKnown(true);
          void pruneScreens(new Set(event.sessions.map((s) => s.id)));
        }
      };
      return ws;
    },
    probe: fallBack,
    // Every phase the loop sets follows a close or comes before the next snapshot.
    onPhase: () => setLive(false),
  });

  /** The socket was refused: the HTTP answer shows the list meanwhile, or reports the 401 (the loop then stops). */
  async function fallBack(): Promise<ProbeResult> {
    try {
      const list = await api.listSessions();
      if (!live()) {
        setSessions([...list].sort(byCreation));
        setKnown(true);
      }
      return "ok";
    } catch (error) {
      return isUnauthorized(error) ? "unauthorized" : "ok";
    }
  }
  onCleanup(() => loop.dispose());

  return {
    sessions,
    live,
    known,
    apply(session) {
      setSessions((list) => {
        const known = list.find((s) => s.id === session.id);
        if (known && known.updatedAt > session.updatedAt) return list;
        return applySessionEvent(list, { type: "updated", session });
      });
    },
    forget(id) {
      setSessions((list) => applySessionEvent(list, { type: "removed", id }));
    },
  };
}
