/**
 * Moving a hybrid session between its ends from the PWA ("Continue in chat", "Open terminal"):
 * `POST /api/sessions/{id}/move {to, interrupt?}`. While the agent works the server answers 409
 * BUSY; the user is then asked whether to interrupt it, and only a yes sends `interrupt: true`.
 */
import { createSignal, type Accessor } from "solid-js";
import type { HybridEnd } from "../../../server/contract/types.ts";
import { ApiError, describeError, type Api } from "../api.ts";

/** The body of a 4409 close: `session moved: <end>`. */
const MOVED_REASON = /session moved: (terminal|chat)\b/;

/** The end a 4409's reason names, or null. */
export function movedEnd(reason: string): HybridEnd | null {
  const match = MOVED_REASON.exec(reason);
  return match ? (match[1] as HybridEnd) : null;
}

export const END_NAMES: Record<HybridEnd, string> = { terminal: "the terminal", chat: "the chat" };

export type MoveFlow = {
  /** a move is under way */
  moving: Accessor<boolean>;
  /** the agent is busy: ask whether to interrupt it */
  confirming: Accessor<boolean>;
  error: Accessor<string | null>;
  start(): void;
  /** the user agreed to interrupt the agent */
  confirm(): void;
  cancel(): void;
};

/** The move to `to`, with the BUSY confirmation; `onMoved` runs once the session is there. */
export function createMoveFlow(api: Api, sessionId: string, to: HybridEnd, onMoved: () => void): MoveFlow {
  const [moving, setMoving] = createSignal(false);
  const [confirming, setConfirming] = createSignal(false);
  const [error, setError] = createSignal<string | null>(null);

  async function run(interrupt: boolean): Promise<void> {
    if (moving()) return;
    setMoving(true);
    setError(null);
    setConfirming(false);
    try {
      await api.moveSession(sessionId, to, interrupt);
      onMoved();
    } catch (failure) {
      if (failure instanceof ApiError && failure.code === "BUSY") setConfirming(true);
      else setError(describeError(failure));
    } finally {
      setMoving(false);
    }
  }

  return {
    moving,
    confirming,
    error,
    start: () => void run(false),
    confirm: () => void run(true),
    cancel: () => setConfirming(false),
  };
}
