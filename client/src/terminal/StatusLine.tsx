import { createSignal, Match, Show, Switch } from "solid-js";
import { describeError, isUnauthorized } from "../api.ts";
import type { ConnectionPhase } from "./connection.ts";
import type { TerminalView } from "./terminal-view.ts";

const timeOfDay = (ms: number) => new Date(ms).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });

/** "Restoring…" while the stream is not live; null when it is (or will never be again). */
function restoringText(phase: ConnectionPhase): string | null {
  switch (phase.phase) {
    case "connecting":
    case "replaying":
      return "Restoring…";
    case "waiting":
      return phase.offline ? "Restoring… (offline)" : "Restoring…";
    default:
      return null;
  }
}

const STOPPED_TEXT = {
  not_found: "This session no longer exists.",
  moved: "This session moved elsewhere.",
  unauthorized: "Not logged in.",
} as const;

/**
 * One line above the terminal (never over it): how the session ended, the reconnect hint, a
 * passing notice, or who controls it.
 */
export function StatusLine(props: { view: TerminalView; notice: string | null; onBack: () => void }) {
  const [error, setError] = createSignal<string | null>(null);
  const v = () => props.view;
  const phase = () => v().phase();
  const exited = () => v().exitCode() !== null || (phase().phase === "stopped" && (phase() as { reason: string }).reason === "exited");
  const stoppedReason = () => {
    const p = phase();
    return p.phase === "stopped" && p.reason !== "exited" ? p.reason : null;
  };
  const grid = () => {
    const c = v().control();
    return c ? `${c.cols}×${c.rows}` : "";
  };

  async function restart() {
    setError(null);
    try {
      await v().restart();
    } catch (failure) {
      if (!isUnauthorized(failure)) setError(describeError(failure));
    }
  }

  return (
    <div class="term-status" role="status" aria-live="polite">
      <Switch
        fallback={
          <Show
            when={v().isController()}
            fallback={
              <>
                <span class="term-status__text">
                  <Show when={v().control()?.controller} fallback={<>No one controls</>}>
                    {(controller) => (
                      <>
                        <strong>{controller().label || "Another tab"}</strong> controls since {timeOfDay(controller().since)}
                      </>
                    )}
                  </Show>
                  <span class="term-status__grid"> · {grid()}</span>
                </span>
                <button class="button button--small" type="button" onClick={() => v().takeControl()}>
                  Take control
                </button>
              </>
            }
          >
            <span class="term-status__text">
              You control <span class="term-status__grid">· {grid()}</span>
            </span>
          </Show>
        }
      >
        <Match when={stoppedReason()}>
          {(reason) => (
            <>
              <span class="term-status__text term-status__text--problem">
                {reason() === "moved" ? `Moved: ${(phase() as { detail: string }).detail}` : STOPPED_TEXT[reason()]}
              </span>
              <button class="button button--small" type="button" onClick={props.onBack}>
                Sessions
              </button>
            </>
          )}
        </Match>
        <Match when={exited()}>
          <span class="term-status__text term-status__text--exited">
            Exited with code {v().exitCode() ?? v().session()?.exitCode ?? "?"}
          </span>
          <Show when={error()}>{(message) => <span class="term-status__error">{message()}</span>}</Show>
          <button class="button button--small" type="button" onClick={restart}>
            Restart
          </button>
        </Match>
        <Match when={restoringText(phase())}>
          {(text) => <span class="term-status__text term-status__text--restoring">{text()}</span>}
        </Match>
        <Match when={props.notice}>{(notice) => <span class="term-status__text">{notice()}</span>}</Match>
      </Switch>
    </div>
  );
}
