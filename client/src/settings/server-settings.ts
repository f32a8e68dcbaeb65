/**
 * The server's settings, live from `/ws/settings` (sent on connect and after every change,
 * wherever it came from). Reconnects with the stream backoff. Create inside a Solid owner.
 */
import { createSignal, onCleanup, type Accessor } from "solid-js";
import { decodeSettingsEvent } from "../../../server/contract/settings-stream.ts";
import { backoffDelay } from "../../../server/contract/reconnect.ts";
import type { Settings } from "../../../server/contract/types.ts";
import { withCompression } from "../storage/device-settings.ts";

export const SETTINGS_STREAM_PATH = "/ws/settings";

export function settingsStreamUrl(base: string = window.location.href): string {
  const url = new URL(SETTINGS_STREAM_PATH, base);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  return withCompression(url.toString());
}

export function createServerSettings(): Accessor<Settings | null> {
  const [settings, setSettings] = createSignal<Settings | null>(null);
  let socket: WebSocket | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let attempt = 0;
  let closed = false;

  function connect(): void {
    timer = null;
    if (closed) return;
    const ws = new WebSocket(settingsStreamUrl());
    socket = ws;
    ws.onmessage = (message) => {
      if (typeof message.data !== "string") return;
      const event = decodeSettingsEvent(message.data);
      if (event.type === "invalid") return console.warn("webmux: ignoring a settings message:", event.detail);
      attempt = 0;
      setSettings(event.settings);
    };
    ws.onclose = () => {
      if (socket !== ws || closed) return;
      socket = null;
      timer = setTimeout(connect, backoffDelay(attempt++));
    };
  }
  connect();
  onCleanup(() => {
    closed = true;
    if (timer !== null) clearTimeout(timer);
    socket?.close(1000, "closed");
  });
  return settings;
}
