/**
 * Dark or light: follows the system unless the user chose one. Stored per device. Toggling picks
 * the opposite of what is shown; when that equals the system's choice, the app follows the system
 * again, so two toggles always return to "system".
 */
import { createSignal, onCleanup, type Accessor } from "solid-js";

export type ThemePreference = "system" | "dark" | "light";

const THEME_KEY = "webmux.theme";
const DARK_QUERY = "(prefers-color-scheme: dark)";

function loadPreference(storage: Storage): ThemePreference {
  const value = storage.getItem(THEME_KEY);
  return value === "dark" || value === "light" ? value : "system";
}

export type Theme = {
  dark: Accessor<boolean>;
  preference: Accessor<ThemePreference>;
  toggle(): void;
};

/** Call inside a Solid owner (the App): it listens to the system setting until cleanup. */
export function createTheme(storage: Storage = localStorage): Theme {
  const media = window.matchMedia(DARK_QUERY);
  const [systemDark, setSystemDark] = createSignal(media.matches);
  const [preference, setPreference] = createSignal(loadPreference(storage));
  const onChange = (event: MediaQueryListEvent) => setSystemDark(event.matches);
  media.addEventListener("change", onChange);
  onCleanup(() => media.removeEventListener("change", onChange));

  const dark = () => (preference() === "system" ? systemDark() : preference() === "dark");
  return {
    dark,
    preference,
    toggle() {
      const wantDark = !dark();
      const next: ThemePreference = wantDark === systemDark() ? "system" : wantDark ? "dark" : "light";
      if (next === "system") storage.removeItem(THEME_KEY);
      else storage.setItem(THEME_KEY, next);
      setPreference(next);
    },
  };
}
