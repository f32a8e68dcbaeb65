/** The one way a text JSON frame of any endpoint is parsed: never throws, answers a FrameError. */

import type { FrameError } from "./frames.ts";
import { PayloadError } from "./payloads.ts";

/** `annotate` may add to the error of a payload that parsed as JSON but broke the contract (e.g. its ID). */
export function decodeJsonText<T>(
  text: unknown,
  read: (value: unknown) => T,
  annotate?: (value: unknown, invalid: FrameError) => void,
): T | FrameError {
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
    if (!(error instanceof PayloadError)) throw error;
    const invalid: FrameError = { type: "invalid", reason: "bad_payload", detail: error.message };
    annotate?.(value, invalid);
    return invalid;
  }
}
