/**
 * The key bar for touch screens: the keys a phone keyboard lacks (Esc, Tab, arrows, Ctrl-C,
 * Ctrl-D), sticky Ctrl and Alt that apply to the next key typed in the terminal, and paste.
 * Buttons never take focus, so the on-screen keyboard stays open on the terminal.
 */
import { createSignal, For, onCleanup } from "solid-js";
import type { TerminalView } from "../terminal/terminal-view.ts";
import { applyModifiers } from "./modifiers.ts";
import "./keys.css";

type Key = { label: string; name: string; bytes: string };

const KEYS: readonly Key[] = [
  { label: "Esc", name: "Escape", bytes: "\x1b" },
  { label: "Tab", name: "Tab", bytes: "\t" },
  { label: "←", name: "Left", bytes: "\x1b[D" },
  { label: "↑", name: "Up", bytes: "\x1b[A" },
  { label: "↓", name: "Down", bytes: "\x1b[B" },
  { label: "→", name: "Right", bytes: "\x1b[C" },
  { label: "^C", name: "Ctrl-C", bytes: "\x03" },
  { label: "^D", name: "Ctrl-D", bytes: "\x04" },
];

export function KeyBar(props: { view: TerminalView }) {
  const [ctrl, setCtrl] = createSignal(false);
  const [alt, setAlt] = createSignal(false);

  function arm(next: { ctrl: boolean; alt: boolean }): void {
    setCtrl(next.ctrl);
    setAlt(next.alt);
    // One-shot: the next typed key gets the modifiers, then they are released.
    props.view.setInputFilter(
      next.ctrl || next.alt
        ? (data) => {
            const out = applyModifiers(data, { ctrl: ctrl(), alt: alt() });
            arm({ ctrl: false, alt: false });
            return out;
          }
        : null,
    );
  }
  onCleanup(() => props.view.setInputFilter(null));

  function press(key: Key): void {
    props.view.sendKeys(alt() ? "\x1b" + key.bytes : key.bytes);
    arm({ ctrl: false, alt: false });
  }

  async function paste(): Promise<void> {
    try {
      props.view.paste(await navigator.clipboard.readText());
    } catch {
      // No clipboard permission or not a secure context: the system paste still works in the terminal.
    }
  }

  /** Keep focus (and the on-screen keyboard) where it is. */
  const keepFocus = (event: PointerEvent) => event.preventDefault();

  return (
    <div class="key-bar" role="toolbar" aria-label="Keys">
      <button type="button" class="key" aria-label="Ctrl" aria-pressed={ctrl()} onPointerDown={keepFocus} onClick={() => arm({ ctrl: !ctrl(), alt: alt() })}>
        Ctrl
      </button>
      <button type="button" class="key" aria-label="Alt" aria-pressed={alt()} onPointerDown={keepFocus} onClick={() => arm({ ctrl: ctrl(), alt: !alt() })}>
        Alt
      </button>
      <For each={KEYS}>
        {(key) => (
          <button type="button" class="key" aria-label={key.name} onPointerDown={keepFocus} onClick={() => press(key)}>
            {key.label}
          </button>
        )}
      </For>
      <button type="button" class="key" aria-label="Paste" onPointerDown={keepFocus} onClick={() => void paste()}>
        Paste
      </button>
    </div>
  );
}
