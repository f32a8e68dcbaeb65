/**
 * The text JSON frames of /ws/sessions, encoded and decoded in the contract like
 * the binary terminal frames, so no other module hand-builds them.
 */

import type { FrameError } from "./frames.ts";
import { decodeJsonText } from "./json-text.ts";
import { readSessionListEvent } from "./payloads.ts";
import type { SessionListEvent } from "./types.ts";

/** The text of one /ws/sessions message; throws PayloadError for an event that breaks the contract. */
export function encodeSessionListEvent(event: SessionListEvent): string {
  return JSON.stringify(readSessionListEvent(event));
}

/** Parse one /ws/sessions message; never throws. */
export function decodeSessionListEvent(text: string): SessionListEvent | FrameError {
  return decodeJsonText(text, readSessionListEvent);
}
