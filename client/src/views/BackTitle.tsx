/** The start of a page's top bar (`.term-bar`): a back link to the session list, then the page title. */
import { BackIcon } from "../icons.tsx";

export function BackTitle(props: { title: string; onBack: () => void }) {
  return (
    <>
      <a
        class="icon-button"
        href="/"
        aria-label="Back to sessions"
        onClick={(event) => {
          event.preventDefault();
          props.onBack();
        }}
      >
        <BackIcon />
      </a>
      <h1 class="term-bar__title" title={props.title}>
        {props.title}
      </h1>
    </>
  );
}
