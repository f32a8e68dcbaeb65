/**
 * The app-level attention watcher: follows the one session list feed wherever the user is (list,
 * terminal, settings) and, when a session's attention turns on while the page is hidden, shows
 * its notification; the app badge always counts the sessions asking. Create inside a Solid owner.
 */
import { createEffect, onCleanup } from "solid-js";
import type { SessionFeed } from "../sessions/session-feed.ts";
import { isSessionPath, stepAttention } from "./attention.ts";
import { showAttention, showBadge, withdrawAttention } from "./notifier.ts";

/** The service worker posts this to a window when its notification was tapped (notification-sw.js). */
export const OPEN_SESSION_MESSAGE = "webmux:open-session";

export function watchAttention(feed: SessionFeed): void {
  let seen: ReadonlyMap<string, boolean> | null = null;
  createEffect(() => {
    const sessions = feed.sessions();
    // Until a real list arrived, the empty initial list is not "no session asks".
    if (!feed.known()) return;
    const step = stepAttention(seen, sessions);
    seen = step.seen;
    showBadge(step.count);
    // Only a hidden page notifies: a visible one shows the attention mark itself.
    if (document.visibilityState === "hidden") {
      for (const session of step.rang) void showAttention(session).catch((error: unknown) => console.warn("webmux: notification:", error));
    }
    for (const id of step.quieted) void withdrawAttention(id).catch(() => undefined);
  });
}

/**
 * Navigates when the service worker says a notification was tapped (it focused this window and
 * posted the session's path). Only a terminal path is accepted.
 */
export function listenForOpenSession(open: (path: string) => void): void {
  if (!("serviceWorker" in navigator)) return;
  const onMessage = (event: MessageEvent) => {
    const data: unknown = event.data;
    if (typeof data !== "object" || data === null) return;
    const { type, path } = data as { type?: unknown; path?: unknown };
    if (type === OPEN_SESSION_MESSAGE && typeof path === "string" && isSessionPath(path)) open(path);
  };
  navigator.serviceWorker.addEventListener("message", onMessage);
  onCleanup(() => navigator.serviceWorker.removeEventListener("message", onMessage));
}
