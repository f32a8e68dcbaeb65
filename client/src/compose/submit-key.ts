/**
 * The key a submission ends with, chosen per session and kept on this device: Enter for shells
 * and most agents, Alt+Enter or Ctrl+J for programs where Enter inserts a newline.
 */
export type SubmitKey = { label: string; bytes: string };

export const SUBMIT_KEYS: readonly SubmitKey[] = [
  { label: "Enter", bytes: "\r" },
  { label: "Alt+Enter", bytes: "\x1b\r" },
  { label: "Ctrl+J", bytes: "\n" },
  { label: "none", bytes: "" },
];

const DEFAULT_SUBMIT_KEY = "\r";
const storageKey = (sessionId: string) => `webmux.submitKey.${sessionId}`;

export function loadSubmitKey(sessionId: string, storage: Storage = localStorage): string {
  const stored = storage.getItem(storageKey(sessionId));
  return SUBMIT_KEYS.some((key) => key.bytes === stored) ? stored! : DEFAULT_SUBMIT_KEY;
}

export function saveSubmitKey(sessionId: string, bytes: string, storage: Storage = localStorage): string {
  const known = SUBMIT_KEYS.some((key) => key.bytes === bytes) ? bytes : DEFAULT_SUBMIT_KEY;
  storage.setItem(storageKey(sessionId), known);
  return known;
}
