/**
 * The server's settings, live from `/ws/settings` (sent on connect and after every change,
 * wherever it came from). Reconnects through the shared reconnect loop. Create inside a Solid owner.
 */
import { createSignal, onCleanup, type Accessor } from "solid-js";
import { decodeSettingsEvent } from "../../../server/contract/settings-stream.ts";
import type { Settings } from "../../../server/contract/types.ts";
import { makeReconnectLoop } from "../net/reconnect-loop.ts";
import { withCompression } from "../storage/device-settings.ts";

export const SETTINGS_STREAM_PATH = "/ws/settings";

export function settingsStreamUrl(base: string = window.location.href): string {
  const url = new URL(SETTINGS_STREAM_PATH, base);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  return withCompression(url.toString());
}

export function createServerSettings(): Accessor<Settings | null> {
  const [settings, setSettings] = createSignal<Settings | null>(null);
  const loop = makeReconnectLoop<never>({
    stats: { opens: 0, waits: 0 },
    open() {
      const ws = new WebSocket(settingsStreamUrl());
      ws.onmessage = (message) => {
        if (typeof message.data !== "string") return;
        const event = decodeSettingsEvent(message.data);
        if (event.type === "invalid") return console.warn("webmux: ignoring a settings message:", event.detail);
        loop.markLive();
        setSettings(event.settings);
      };
      return ws;
    },
    // A refused handshake is retried with backoff; the pages' own HTTP calls report a 401.
    probe: async () => "ok",
    onPhase: () => {},
  });
  onCleanup(() => loop.dispose());
  return settings;
}
