/**
 * Whether this device lets the app show notifications. Asking is only ever done from a user
 * gesture (the Settings button): browsers ignore or penalise a prompt on load.
 */
import { createSignal, type Accessor } from "solid-js";

/** on: granted; off: not asked yet; blocked: the user said no (only the browser's settings undo it). */
export type NotificationState = "on" | "off" | "blocked" | "unsupported";

export function notificationState(): NotificationState {
  if (typeof Notification === "undefined") return "unsupported";
  switch (Notification.permission) {
    case "granted":
      return "on";
    case "denied":
      return "blocked";
    default:
      return "off";
  }
}

const [state, setState] = createSignal<NotificationState>(notificationState());

/** The current state, kept current when the user changes it in the browser's site settings too. */
export function notificationStateSignal(): Accessor<NotificationState> {
  return state;
}

/** Call from a click handler only. Resolves with the state after the user answered. */
export async function requestNotifications(): Promise<NotificationState> {
  if (typeof Notification === "undefined") return "unsupported";
  try {
    await Notification.requestPermission();
  } catch {
    // Old Safari only takes a callback; its answer is read below all the same.
  }
  setState(notificationState());
  return state();
}

// The permission can change behind the app's back (site settings); follow it where the browser says.
void navigator.permissions
  ?.query({ name: "notifications" })
  .then((status) => status.addEventListener("change", () => setState(notificationState())))
  .catch(() => undefined);
