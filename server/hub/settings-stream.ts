import { encodeSettingsEvent } from "../contract/settings-stream.ts";
import { ErrorCode, type Settings } from "../contract/types.ts";
import { refuseUpgrade, type App, type UpgradeHandler } from "../http/app.ts";
import { can } from "../http/credentials.ts";
import type { Emitter } from "../session/emitter.ts";
import type { WebSocketAcceptor } from "./accept.ts";
import { TextBroadcast, type TextBroadcastOptions } from "./text-broadcast.ts";

export const SETTINGS_STREAM_PATH = "/ws/settings";

/** What the stream needs of the settings (SettingsStore fits). */
export type SettingsSource = {
  readonly events: Emitter<{ changed: [settings: Settings] }>;
  get(): Settings;
};

/**
 * `/ws/settings`: the settings on connect and after every change, wherever it came from
 * (`PUT /api/settings`, a start flag), so every open tab and device shows the same settings.
 */
export class SettingsStream {
  private readonly clients: TextBroadcast;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly settings: SettingsSource,
    private readonly acceptor: WebSocketAcceptor,
    options: TextBroadcastOptions = {},
  ) {
    this.clients = new TextBroadcast(options);
    this.unsubscribe = settings.events.on("changed", (next) => {
      const text = this.encode(next);
      if (text !== null) this.clients.send(text);
    });
  }

  register(app: App): void {
    app.websocket(SETTINGS_STREAM_PATH, this.handleUpgrade);
  }

  handleUpgrade: UpgradeHandler = (req, socket, head, { url, auth }) => {
    // Reading settings over HTTP needs terminal:read; the stream is the same read.
    if (!can(auth.principal, "terminal:read")) {
      refuseUpgrade(socket, 403, ErrorCode.CAPABILITY_DENIED, "this token may not read settings");
      return;
    }
    this.acceptor.accept(req, socket, head, url, auth.principal, (ws) => {
      const text = this.encode(this.settings.get());
      if (text === null) {
        ws.close(1011, "internal error");
        return;
      }
      this.clients.add(ws, text);
    });
  };

  /** Connected settings clients. */
  get size(): number {
    return this.clients.size;
  }

  /** Shutdown: stop following the settings and close every socket. */
  close(code = 1001, reason = "server shutting down"): void {
    this.unsubscribe();
    this.clients.closeAll(code, reason);
  }

  private encode(settings: Settings): string | null {
    try {
      return encodeSettingsEvent({ type: "settings", settings });
    } catch (err) {
      console.error("webmux: cannot encode the settings event:", err);
      return null;
    }
  }
}
