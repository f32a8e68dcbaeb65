/**
 * The text JSON frames of /ws/sessions, encoded and decoded in the contract like
 * the binary terminal frames, so no other module hand-builds them.
 */

import type { FrameError } from "./frames.ts";
import { PayloadError, readSessionListEvent } from "./payloads.ts";
import type { SessionListEvent } from "./types.ts";

/** The text of one /ws/sessions message; throws PayloadError for an event that breaks the contract. */
export function encodeSessionListEvent(event: SessionListEvent): string {
  return JSON.stringify(readSessionListEvent(event));
}

/** Parse one /ws/sessions message; never throws. */
export function decodeSessionListEvent(text: string): SessionListEvent | FrameError {
  if (typeof text !== "string") return { type: "invalid", reason: "not_text", detail: "message is not text" };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { type: "invalid", reason: "bad_json", detail: "message is not JSON" };
  }
  try {
    return readSessionListEvent(value);
  } catch (error) {
    if (error instanceof PayloadError) return { type: "invalid", reason: "bad_payload", detail: error.message };
    throw error;
  }
}
