/*
 * webmux's service worker add-on, loaded by the generated sw.js (workbox `importScripts` in
 * vite.config.ts). Tapping a session's notification (client/src/notify/notifier.ts) opens that
 * session: in a window of the app already showing it, else in an open window of the app (focused,
 * then told to navigate, so the app keeps its state instead of reloading), else a new window.
 * A classic script: no modules in an importScripts file.
 */

/** Must match OPEN_SESSION_MESSAGE in client/src/notify/attention-watcher.ts. */
const WEBMUX_OPEN_SESSION_MESSAGE = "webmux:open-session";

/** A notification's data leads to a session's terminal or chat only; anything else opens the session list. */
function webmuxSessionPath(data) {
  const url = data && typeof data.url === "string" ? data.url : "";
  return /^\/s\/[a-z0-9]{8}(\/chat)?$/.test(url) ? url : "/";
}

/** Focus may be refused (no user activation); the window is still the one to tell. */
async function webmuxFocus(client) {
  try {
    return (await client.focus()) || client;
  } catch {
    return client;
  }
}

async function webmuxOpenSession(path) {
  const target = new URL(path, self.location.origin).href;
  const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
  const showing = windows.find((client) => client.url === target);
  if (showing) {
    await webmuxFocus(showing);
    return "focused";
  }
  const open = windows.find((client) => client.focused) || windows.find((client) => client.visibilityState === "visible") || windows[0];
  if (open) {
    const focused = await webmuxFocus(open);
    focused.postMessage({ type: WEBMUX_OPEN_SESSION_MESSAGE, path });
    return "told";
  }
  await self.clients.openWindow(target);
  return "opened";
}

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  event.waitUntil(webmuxOpenSession(webmuxSessionPath(event.notification.data)));
});
