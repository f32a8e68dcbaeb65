import { createSignal } from "solid-js";
import { CloseIcon, DownIcon, UpIcon } from "../icons.tsx";
import type { TerminalView } from "./terminal-view.ts";

/** Find in the terminal's scrollback (xterm's search addon); the truncation marker is findable too. */
export function FindBar(props: { view: TerminalView; onClose: () => void }) {
  const [term, setTerm] = createSignal("");
  const [missing, setMissing] = createSignal(false);

  const find = (direction: "next" | "previous") => {
    if (term() === "") return;
    setMissing(!props.view.find(term(), direction));
  };

  return (
    <form
      class="find-bar"
      role="search"
      onSubmit={(event) => {
        event.preventDefault();
        find("next");
      }}
    >
      <input
        class="input find-bar__input"
        type="search"
        aria-label="Find in terminal"
        placeholder="Find"
        autocapitalize="off"
        autocomplete="off"
        spellcheck={false}
        autofocus
        value={term()}
        aria-invalid={missing()}
        onInput={(event) => {
          setTerm(event.currentTarget.value);
          setMissing(false);
        }}
        onKeyDown={(event) => {
          if (event.key === "Escape") props.onClose();
          else if (event.key === "Enter" && event.shiftKey) {
            event.preventDefault();
            find("previous");
          }
        }}
      />
      <span class="find-bar__result" aria-live="polite">
        {missing() ? "No match" : ""}
      </span>
      <button class="icon-button" type="button" aria-label="Previous match" onClick={() => find("previous")}>
        <UpIcon />
      </button>
      <button class="icon-button" type="submit" aria-label="Next match">
        <DownIcon />
      </button>
      <button class="icon-button" type="button" aria-label="Close find" onClick={props.onClose}>
        <CloseIcon />
      </button>
    </form>
  );
}
