/**
 * Shows and withdraws a session's notification, and sets the app badge. Notifications go through
 * the service worker's registration: Android Chrome has no `new Notification` (it throws), and a
 * notification the service worker owns is what `notificationclick` (public/notification-sw.js)
 * answers when tapped. Without a service worker (the dev server) a page notification stands in.
 */
import type { SessionInfo } from "../../../server/contract/types.ts";
import { attentionMessage, sessionPath } from "./attention.ts";

/** The icon of the notification and, on Android, its small monochrome badge. */
const ICON = "/icon-192.png";

/** What public/notification-sw.js reads from a notification's `data`. */
export type AttentionNotificationData = { sessionId: string; url: string };

async function registration(): Promise<ServiceWorkerRegistration | null> {
  if (!("serviceWorker" in navigator)) return null;
  return (await navigator.serviceWorker.getRegistration().catch(() => undefined)) ?? null;
}

/** Page notifications shown without a service worker, by session, so they can be closed. */
const pageNotifications = new Map<string, Notification>();

export async function showAttention(session: SessionInfo): Promise<void> {
  if (typeof Notification === "undefined" || Notification.permission !== "granted") return;
  const { title, body } = attentionMessage(session);
  const data: AttentionNotificationData = { sessionId: session.id, url: sessionPath(session) };
  // The tag is the session: a second bell replaces its notification instead of stacking; renotify
  // makes the replacement alert again.
  const options = { body, tag: session.id, renotify: true, icon: ICON, badge: ICON, data } as NotificationOptions;
  const worker = await registration();
  if (worker) {
    await worker.showNotification(title, options);
    return;
  }
  pageNotifications.get(session.id)?.close();
  const shown = new Notification(title, options);
  shown.onclick = () => {
    window.focus();
    window.location.assign(data.url);
  };
  pageNotifications.set(session.id, shown);
}

/** The session no longer asks for attention: its notification would only be stale. */
export async function withdrawAttention(sessionId: string): Promise<void> {
  pageNotifications.get(sessionId)?.close();
  pageNotifications.delete(sessionId);
  const worker = await registration();
  for (const shown of (await worker?.getNotifications({ tag: sessionId })) ?? []) shown.close();
}

let badgeShown: number | null = null;

/** The app badge shows how many sessions ask for attention; none clears it. */
export function showBadge(count: number): void {
  if (count === badgeShown || !("setAppBadge" in navigator)) return;
  badgeShown = count;
  const done = count > 0 ? navigator.setAppBadge(count) : navigator.clearAppBadge();
  // Refused outside an installed app on some browsers: the badge is a nicety.
  void done.catch(() => undefined);
}
