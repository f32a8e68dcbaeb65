/**
 * Settings that belong to this device, kept in localStorage: WebSocket compression (the Network
 * setting: on a slow phone link it trades CPU for bytes) and the terminal font size.
 */
const COMPRESS_KEY = "webmux.compress";
const FONT_SIZE_KEY = "webmux.fontSize";
/** Smallest and largest terminal font sizes offered: readable on a phone, not absurd on a desktop. */
export const FONT_SIZE_RANGE = { min: 9, max: 24 } as const;

export function loadCompress(storage: Storage = localStorage): boolean {
  return storage.getItem(COMPRESS_KEY) === "1";
}

export function saveCompress(on: boolean, storage: Storage = localStorage): boolean {
  storage.setItem(COMPRESS_KEY, on ? "1" : "0");
  return on;
}

/** Adds `compress=1` to a WebSocket URL when the Network setting is on. */
export function withCompression(url: string, storage: Storage = localStorage): string {
  if (!loadCompress(storage)) return url;
  const parsed = new URL(url);
  parsed.searchParams.set("compress", "1");
  return parsed.toString();
}

/** The chosen font size, or null for the layout's default. */
export function loadFontSize(storage: Storage = localStorage): number | null {
  const value = Number(storage.getItem(FONT_SIZE_KEY));
  return Number.isInteger(value) && value >= FONT_SIZE_RANGE.min && value <= FONT_SIZE_RANGE.max ? value : null;
}

export function saveFontSize(size: number | null, storage: Storage = localStorage): number | null {
  if (size === null) storage.removeItem(FONT_SIZE_KEY);
  else storage.setItem(FONT_SIZE_KEY, String(Math.min(FONT_SIZE_RANGE.max, Math.max(FONT_SIZE_RANGE.min, Math.round(size)))));
  return loadFontSize(storage);
}
