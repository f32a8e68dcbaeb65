import type WebSocket from "ws";

/**
 * What every protocol test client needs of its socket: a promise for the open handshake (rejected
 * with the HTTP status of a refused one), a promise for the close code, and the close kept on
 * `into` (its `closeCode` and `closeReason`) for assertions. Errors after the handshake are left
 * to the close event.
 */
export function watchSocket(ws: WebSocket, into: { closeCode: number | null; closeReason: string }): { opened: Promise<void>; closed: Promise<number> } {
  const opened = new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("unexpected-response", (_req, res) => reject(new Error(`handshake answered ${res.statusCode}`)));
    ws.once("error", reject);
  });
  const closed = new Promise<number>((resolve) => {
    ws.on("close", (code, reason) => {
      into.closeCode = code;
      into.closeReason = reason.toString();
      resolve(code);
    });
  });
  ws.on("error", () => {});
  return { opened, closed };
}
