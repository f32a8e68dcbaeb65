/**
 * The chat page's link to `/ws/s/{id}/chat`: connects with `client`, `label`, `since` (the last
 * journal seq applied, read at every connect) and `compress=1` when the device's Network setting
 * says so; decodes every text frame through the contract; reconnects as each close code asks —
 * backoff after a drop, at once after 4408, never after 4404/4409 (docs/protocol.md, Close codes: a moved session is
 * shown, not chased). A plain object: the caller disposes it.
 */
import { decodeChatServerEvent, encodeChatClientMessage, type ChatClientMessage, type ChatServerEvent } from "../../../server/contract/chat.ts";
import { makeReconnectLoop, type ProbeResult, type ReconnectLoop, type ReconnectPhase } from "../net/reconnect-loop.ts";
import { loadCompress } from "../storage/device-settings.ts";

/** `hello` arrived: the snapshot or replay follows in order, frames may be sent */
type LivePhase = { phase: "live" };

export type ChatPhase = ReconnectPhase | LivePhase;

export type ChatConnectionOptions = {
  sessionId: string;
  clientId: string;
  /** read at every connect, so a renamed device shows up on the next one */
  label: () => string;
  /** the last seq applied, read at every connect; null for a snapshot */
  since: () => number | null;
  /** appends `compress=1`; default: the device's Network setting, read at every connect */
  compress?: boolean;
  onEvent(event: ChatServerEvent): void;
  onPhase(phase: ChatPhase): void;
  /** why a socket that never opened was refused (its HTTP status is hidden from scripts) */
  probe(): Promise<ProbeResult>;
};

export type ChatConnection = {
  /** true when the message went out; false while not connected (nothing is queued) */
  send(message: ChatClientMessage): boolean;
  /** connect again now, from `since` */
  reconnect(): void;
  /** treat the socket as lost (tests) */
  drop(): void;
  dispose(): void;
  readonly stats: Readonly<{ opens: number; waits: number }>;
};

export function chatSocketUrl(
  options: Pick<ChatConnectionOptions, "sessionId" | "clientId">,
  label: string,
  since: number | null,
  compress: boolean,
  base: string = window.location.href,
): string {
  const url = new URL(`/ws/s/${encodeURIComponent(options.sessionId)}/chat`, base);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  url.searchParams.set("client", options.clientId);
  if (label !== "") url.searchParams.set("label", label);
  if (since !== null) url.searchParams.set("since", String(since));
  if (compress) url.searchParams.set("compress", "1");
  return url.toString();
}

export function makeChatConnection(options: ChatConnectionOptions): ChatConnection {
  const stats = { opens: 0, waits: 0 };
  function open(): WebSocket {
    const ws = new WebSocket(chatSocketUrl(options, options.label(), options.since(), options.compress ?? loadCompress()));
    ws.onmessage = (message) => {
      if (typeof message.data !== "string") return; // the chat protocol is text
      const event = decodeChatServerEvent(message.data);
      if (event.type === "invalid") {
        console.warn("webmux: ignoring a chat frame:", event.detail);
        return;
      }
      if (event.type === "hello") loop.markLive();
      options.onEvent(event);
      if (event.type === "hello") loop.setPhase({ phase: "live" });
    };
    return ws;
  }

  const loop: ReconnectLoop<LivePhase> = makeReconnectLoop({ stats, open, probe: options.probe, onPhase: options.onPhase });

  return {
    stats,
    send: (message) => loop.send(encodeChatClientMessage(message)),
    reconnect: loop.reconnect,
    drop: loop.drop,
    dispose: loop.dispose,
  };
}
