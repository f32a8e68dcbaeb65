/**
 * What the key bar's sticky Ctrl and Alt do to the next key: Ctrl maps a character to its C0
 * control (the way a terminal keyboard does), Alt prefixes ESC (the meta-sends-escape convention).
 */
export type Modifiers = { ctrl: boolean; alt: boolean };

/** Ctrl+key as a terminal sends it; keys without a control form pass unchanged. */
export function withCtrl(key: string): string {
  if (key.length !== 1) return key;
  if (key === " " || key === "@" || key === "2") return "\x00";
  if (key === "?" || key === "8") return "\x7f";
  const code = key.toUpperCase().charCodeAt(0);
  // '@' .. '_' (A–Z and [\]^_) map to 0x00–0x1f.
  if (code >= 0x40 && code <= 0x5f) return String.fromCharCode(code & 0x1f);
  return key;
}

/** Applies armed modifiers to one typed key (a paste or a multi-byte key passes Ctrl unchanged). */
export function applyModifiers(data: string, modifiers: Modifiers): string {
  const ctrl = modifiers.ctrl ? withCtrl(data) : data;
  return modifiers.alt ? "\x1b" + ctrl : ctrl;
}
