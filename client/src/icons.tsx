/** Small stroke icons (24×24 grid, currentColor) for buttons whose text would not fit on a phone. */
import type { JSX } from "solid-js";

function Icon(props: { children: JSX.Element }) {
  return (
    <svg class="icon" viewBox="0 0 24 24" width="20" height="20" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true">
      {props.children}
    </svg>
  );
}

export const BackIcon = () => <Icon><path d="M15 18l-6-6 6-6" /></Icon>;
export const SearchIcon = () => <Icon><circle cx="11" cy="11" r="7" /><path d="M20 20l-3.5-3.5" /></Icon>;
export const CopyIcon = () => <Icon><rect x="9" y="9" width="11" height="11" rx="2" /><path d="M5 15V5a2 2 0 0 1 2-2h8" /></Icon>;
export const ThemeIcon = () => <Icon><path d="M12 3a9 9 0 1 0 9 9 7 7 0 0 1-9-9z" /></Icon>;
export const CloseIcon = () => <Icon><path d="M6 6l12 12M18 6L6 18" /></Icon>;
export const UpIcon = () => <Icon><path d="M6 15l6-6 6 6" /></Icon>;
export const DownIcon = () => <Icon><path d="M6 9l6 6 6-6" /></Icon>;
export const PlusIcon = () => <Icon><path d="M12 5v14M5 12h14" /></Icon>;
