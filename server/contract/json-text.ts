/** The one way a text JSON frame of any endpoint is parsed: never throws, answers a FrameError. */

import type { FrameError } from "./frames.ts";
import { PayloadError } from "./payloads.ts";

export function decodeJsonText<T>(text: unknown, read: (value: unknown) => T): T | FrameError {
  if (typeof text !== "string") return { type: "invalid", reason: "not_text", detail: "message is not text" };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { type: "invalid", reason: "bad_json", detail: "message is not JSON" };
  }
  try {
    return read(value);
  } catch (error) {
    if (error instanceof PayloadError) return { type: "invalid", reason: "bad_payload", detail: error.message };
    throw error;
  }
}
