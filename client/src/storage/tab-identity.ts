/**
 * Who this tab is to the server: a client ID per tab and a device label per browser.
 *
 * The client ID lives in sessionStorage, which survives a reload but is copied when a tab is
 * duplicated. To tell the two apart, a live tab keeps a marker in its sessionStorage and removes
 * it when the page goes away (pagehide). A reload therefore finds no marker and keeps its ID; a
 * duplicate finds the original's marker (copied while the original was alive) and takes a new ID.
 */
import { isValidClientId, sanitizeLabel } from "../../../server/contract/protocol.ts";

const CLIENT_ID_KEY = "webmux.clientId";
const LIVE_MARKER_KEY = "webmux.live";
const DEVICE_LABEL_KEY = "webmux.deviceLabel";
/** 16 random bytes: collisions between tabs are out of the question. */
const CLIENT_ID_RANDOM_BYTES = 16;

export type TabIdentity = {
  clientId: string;
  /** true when the stored ID belonged to another live tab (a duplicate) or there was none */
  fresh: boolean;
};

/** A new client ID: `t` and 22 base64url characters. getRandomValues works outside secure contexts too. */
export function newClientId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(CLIENT_ID_RANDOM_BYTES));
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return "t" + btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/**
 * Reads or makes this tab's client ID and sets the live marker. Call once per page load, before
 * anything connects.
 */
export function claimTabIdentity(storage: Storage = sessionStorage, target: Window = window): TabIdentity {
  const stored = storage.getItem(CLIENT_ID_KEY);
  const duplicated = storage.getItem(LIVE_MARKER_KEY) !== null;
  const keep = isValidClientId(stored) && !duplicated;
  const clientId = keep ? stored : newClientId();
  storage.setItem(CLIENT_ID_KEY, clientId);
  storage.setItem(LIVE_MARKER_KEY, "1");
  // pagehide also fires when the page enters the back/forward cache; pageshow brings it back.
  target.addEventListener("pagehide", () => storage.removeItem(LIVE_MARKER_KEY));
  target.addEventListener("pageshow", () => storage.setItem(LIVE_MARKER_KEY, "1"));
  return { clientId, fresh: !keep };
}

/** e.g. "Chrome on Android", from the user agent; only a default the user may change. */
export function defaultDeviceLabel(userAgent: string = navigator.userAgent): string {
  const browser =
    /Edg\//.test(userAgent) ? "Edge"
    : /Firefox\//.test(userAgent) ? "Firefox"
    : /(Chrome|Chromium|CriOS)\//.test(userAgent) ? "Chrome"
    : /Safari\//.test(userAgent) ? "Safari"
    : "Browser";
  const os =
    /Android/.test(userAgent) ? "Android"
    : /iPhone|iPad|iPod/.test(userAgent) ? "iOS"
    : /Mac OS X|Macintosh/.test(userAgent) ? "macOS"
    : /Windows/.test(userAgent) ? "Windows"
    : /CrOS/.test(userAgent) ? "ChromeOS"
    : /Linux/.test(userAgent) ? "Linux"
    : "";
  return os === "" ? browser : `${browser} on ${os}`;
}

/** The label other clients see for this device (shared by every tab of this browser). */
export function loadDeviceLabel(storage: Storage = localStorage): string {
  const stored = sanitizeLabel(storage.getItem(DEVICE_LABEL_KEY)).trim();
  return stored === "" ? defaultDeviceLabel() : stored;
}

/** Stores the label as the server would show it; an empty label means the default again. */
export function saveDeviceLabel(label: string, storage: Storage = localStorage): string {
  const clean = sanitizeLabel(label).trim();
  if (clean === "") storage.removeItem(DEVICE_LABEL_KEY);
  else storage.setItem(DEVICE_LABEL_KEY, clean);
  return clean === "" ? defaultDeviceLabel() : clean;
}
