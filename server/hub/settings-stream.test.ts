import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { decodeSettingsEvent } from "../contract/settings-stream.ts";
import type { Settings } from "../contract/types.ts";
import { startTestServer, type TestServer } from "../testing/test-server.ts";
import { waitFor } from "../testing/wait.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.stop();
});

/** A /ws/settings client keeping every settings object it was sent. */
async function openSettings(): Promise<{ ws: WebSocket; seen: Settings[] }> {
  const ws = new WebSocket(server.url.replace(/^http/, "ws") + "/ws/settings", { headers: { authorization: `Bearer ${server.token}` } });
  const seen: Settings[] = [];
  ws.on("message", (data, isBinary) => {
    const event = decodeSettingsEvent(isBinary ? "" : data.toString());
    if (event.type === "invalid") throw new Error(`bad settings message: ${event.detail}`);
    seen.push(event.settings);
  });
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  await waitFor(() => seen.length > 0, { message: "settings on connect" });
  return { ws, seen };
}

async function closeAll(...sockets: WebSocket[]): Promise<void> {
  await Promise.all(
    sockets.map(
      (ws) =>
        new Promise<void>((resolve) => {
          if (ws.readyState === WebSocket.CLOSED) return resolve();
          ws.once("close", () => resolve());
          ws.close();
        }),
    ),
  );
}

describe("/ws/settings", () => {
  it("sends the settings on connect and every change to every client, whoever made it", async () => {
    const [a, b] = await Promise.all([openSettings(), openSettings()]);
    expect(a.seen).toEqual([{ open_api: { enabled: false } }]);
    expect(b.seen).toEqual([{ open_api: { enabled: false } }]);

    const put = await server.api("/api/settings", { method: "PUT", json: { open_api: { enabled: true } } });
    expect(put.status).toBe(200);
    await waitFor(() => a.seen.length === 2 && b.seen.length === 2, { message: "PUT seen by both" });
    expect(a.seen[1]).toEqual({ open_api: { enabled: true } });
    expect(b.seen[1]).toEqual({ open_api: { enabled: true } });

    // A change that does not come through HTTP (a start flag, another module) reaches them too.
    server.settings.update({ open_api: { enabled: false } });
    await waitFor(() => a.seen.length === 3 && b.seen.length === 3, { message: "store change seen by both" });
    expect(a.seen[2]).toEqual({ open_api: { enabled: false } });
    expect(b.seen[2]).toEqual(a.seen[2]);

    // A client that arrives later starts from the current value, the same GET /api/settings gives.
    await server.api("/api/settings", { method: "PUT", json: { open_api: { enabled: true } } });
    const late = await openSettings();
    expect(late.seen).toEqual([await (await server.api("/api/settings")).json()]);
    expect(late.seen[0]).toEqual({ open_api: { enabled: true } });

    // What clients send is ignored.
    a.ws.send("hello");
    a.ws.send(Buffer.from([1, 2, 3]));
    await server.api("/api/settings", { method: "PUT", json: { open_api: { enabled: false } } });
    await waitFor(() => a.seen.length === 5 && late.seen.length === 2, { message: "still live after junk" });
    await closeAll(a.ws, b.ws, late.ws);
  });

  it("refuses a handshake without a credential with 401", async () => {
    const ws = new WebSocket(server.url.replace(/^http/, "ws") + "/ws/settings");
    const status = await new Promise<number>((resolve, reject) => {
      ws.once("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      ws.once("open", () => reject(new Error("opened without a credential")));
      ws.once("error", () => {});
    });
    expect(status).toBe(401);
  });
});
