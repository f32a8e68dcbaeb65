/**
 * The text JSON frames of /ws/settings, encoded and decoded in the contract like
 * the /ws/sessions messages, so no other module hand-builds them.
 */

import type { FrameError } from "./frames.ts";
import { decodeJsonText } from "./json-text.ts";
import { PayloadError, readObject } from "./payloads.ts";
import type { Settings, SettingsEvent } from "./types.ts";

/** A fresh Settings holding only the known fields; throws PayloadError naming the first wrong one. */
export function readSettings(value: unknown, path = "settings"): Settings {
  const obj = readObject(value, path);
  const openApi = readObject(Object.hasOwn(obj, "open_api") ? obj.open_api : undefined, `${path}.open_api`);
  const enabled = Object.hasOwn(openApi, "enabled") ? openApi.enabled : undefined;
  if (typeof enabled !== "boolean") throw new PayloadError(`${path}.open_api.enabled`, "a boolean");
  return { open_api: { enabled } };
}

export function readSettingsEvent(value: unknown): SettingsEvent {
  const obj = readObject(value, "");
  if (!Object.hasOwn(obj, "type") || obj.type !== "settings") throw new PayloadError("type", "settings");
  return { type: "settings", settings: readSettings(Object.hasOwn(obj, "settings") ? obj.settings : undefined) };
}

/** The text of one /ws/settings message; throws PayloadError for settings that break the contract. */
export function encodeSettingsEvent(event: SettingsEvent): string {
  return JSON.stringify(readSettingsEvent(event));
}

/** Parse one /ws/settings message; never throws. */
export function decodeSettingsEvent(text: string): SettingsEvent | FrameError {
  return decodeJsonText(text, readSettingsEvent);
}
