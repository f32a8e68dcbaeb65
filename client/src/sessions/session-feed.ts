/**
 * The session list, live from `/ws/sessions`: a snapshot on connect, then created / updated /
 * removed. The socket reconnects with backoff; one that cannot open falls back on
 * `GET /api/sessions` (which also reports a 401, sending the app to Login). Create inside a Solid
 * owner; it closes on cleanup.
 */
import { withCompression } from "../storage/device-settings.ts";
import { saveSessionList } from "../storage/session-list-store.ts";
import { createSignal, onCleanup, type Accessor } from "solid-js";
import { decodeSessionListEvent } from "../../../server/contract/session-list.ts";
import { backoffDelay } from "../../../server/contract/reconnect.ts";
import type { SessionInfo, SessionListEvent } from "../../../server/contract/types.ts";
import { isUnauthorized, type Api } from "../api.ts";
import { pruneScreens } from "../storage/screen-store.ts";

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
  let socket: WebSocket | null = null;
  let attempt = 0;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let closed = false;

  function connect(): void {
    timer = null;
    if (closed) return;
    const ws = new WebSocket(sessionListUrl());
    socket = ws;
    let opened = false;
    ws.onopen = () => (opened = true);
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
        attempt = 0;
        setLive(true);
        setKnown(true);
        void pruneScreens(new Set(event.sessions.map((s) => s.id)));
      }
    };
    ws.onclose = () => {
      if (socket !== ws) return;
      socket = null;
      setLive(false);
      if (!opened) void fallBack();
      retry();
    };
  }

  /** The socket was refused: the HTTP answer shows the list meanwhile, or reports the 401. */
  async function fallBack(): Promise<void> {
    try {
      const list = await api.listSessions();
      if (closed || live()) return;
      setSessions([...list].sort(byCreation));
      setKnown(true);
    } catch (error) {
      if (isUnauthorized(error)) close();
    }
  }

  function retry(): void {
    if (closed || timer !== null) return;
    timer = setTimeout(connect, backoffDelay(attempt++));
  }

  const onOnline = () => {
    if (socket === null && timer !== null) {
      clearTimeout(timer);
      connect();
    }
  };
  window.addEventListener("online", onOnline);

  function close(): void {
    closed = true;
    if (timer !== null) clearTimeout(timer);
    window.removeEventListener("online", onOnline);
    const ws = socket;
    socket = null;
    if (ws) {
      ws.onclose = ws.onmessage = ws.onopen = null;
      ws.close(1000, "closed");
    }
  }
  onCleanup(close);
  connect();

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
