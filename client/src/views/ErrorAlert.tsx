/** An error the user must read, announced to screen readers (`role="alert"`); nothing while there is none. */
import { Show } from "solid-js";

export function ErrorAlert(props: { message: string | null | undefined; inline?: boolean }) {
  return (
    <Show when={props.message}>
      {(message) => (
        <p class={props.inline ? "error error--inline" : "error"} role="alert">
          {message()}
        </p>
      )}
    </Show>
  );
}
