/** What closing needs of a socket: ws's WebSocket has it, and so does a test's fake. */
export type ClosableSocket = {
  close(code: number, reason: string): void;
  terminate(): void;
  once(event: "close", listener: () => void): unknown;
};

/**
 * Close `ws` politely with `code`; when the close frame cannot even be queued, terminate it. With
 * `graceMs`, a peer that never reads the close frame (it waits behind unread data) is cut off
 * after that long. The one way every endpoint ends a socket (terminal, chat, list, settings,
 * shutdown), so none forgets the fallback or the timer.
 */
export function closeSocket(ws: ClosableSocket, code: number, reason: string, graceMs?: number): void {
  try {
    ws.close(code, reason);
  } catch {
    ws.terminate();
  }
  if (graceMs === undefined) return;
  const timer = setTimeout(() => ws.terminate(), graceMs);
  timer.unref?.();
  ws.once("close", () => clearTimeout(timer));
}
