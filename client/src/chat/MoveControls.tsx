/**
 * The pieces both pages show around a move: the "interrupt?" question when the agent is busy, and
 * the banner of a session that moved to its other end (4409), with the button that follows it.
 */
import { Show } from "solid-js";
import type { HybridEnd } from "../../../server/contract/types.ts";
import { END_NAMES, type MoveFlow } from "./move.ts";

export function MoveConfirm(props: { flow: MoveFlow; to: HybridEnd }) {
  return (
    <Show when={props.flow.confirming()}>
      <div class="dialog-backdrop" role="dialog" aria-modal="true" aria-label="The agent is busy">
        <div class="dialog dialog--small">
          <p>The agent is working. Interrupt it and continue in {END_NAMES[props.to]}?</p>
          <div class="dialog__actions">
            <button class="button" type="button" onClick={() => props.flow.cancel()}>
              Cancel
            </button>
            <button class="button button--danger" type="button" onClick={() => props.flow.confirm()}>
              Interrupt
            </button>
          </div>
        </div>
      </div>
    </Show>
  );
}

/** "Moved to the chat" and a button to go there; the page does not reconnect. */
export function MovedBanner(props: { end: HybridEnd; onFollow: () => void }) {
  return (
    <div class="moved-banner" role="alert">
      <span class="moved-banner__text">Moved to {END_NAMES[props.end]}</span>
      <button class="button button--primary button--small" type="button" onClick={() => props.onFollow()}>
        {props.end === "chat" ? "Open chat" : "Open terminal"}
      </button>
    </div>
  );
}
