import WebSocket, { type ClientOptions } from "ws";

/** The status a WebSocket handshake to `url` (http(s) or ws(s)) is answered with: 101 when it upgraded. */
export function handshakeStatus(url: string, options: ClientOptions = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url.replace(/^http/, "ws"), options);
    ws.on("open", () => {
      resolve(101);
      ws.close();
    });
    ws.on("unexpected-response", (_req, res) => {
      resolve(res.statusCode ?? 0);
      res.resume();
    });
    ws.on("error", reject);
  });
}
