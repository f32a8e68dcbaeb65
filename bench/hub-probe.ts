/**
 * Whether the terminal stream `/ws/s/{id}` is there to benchmark: the hub is written in
 * parallel (server/hub/terminal-hub.ts), so the WebSocket benchmarks skip, rather than fail,
 * until its module exists and the endpoint upgrades.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { ServerProcess } from "./server-process.ts";
import { HandshakeRefused } from "../server/testing/ws-handshake.ts";
import { TerminalClient } from "./terminal-client.ts";

const HUB_MODULE = fileURLToPath(new URL("../server/hub/terminal-hub.ts", import.meta.url));

/** Why the WebSocket benchmarks cannot run, without starting a server. */
export function hubModuleMissing(): string | null {
  return existsSync(HUB_MODULE) ? null : "hub not available (server/hub/terminal-hub.ts does not exist)";
}

/** Why the WebSocket benchmarks cannot run against `server`, or null when the stream answers. */
export async function hubUnavailable(server: ServerProcess): Promise<string | null> {
  const info = await server.createSession({ command: ["cat"] });
  try {
    const client = await TerminalClient.connect({ url: server.url, token: server.token, sessionId: info.id });
    await client.close();
    return null;
  } catch (err) {
    if (err instanceof HandshakeRefused && err.status === 404) return "hub not available (/ws/s/{id} answers 404)";
    throw err;
  } finally {
    await server.deleteSession(info.id);
  }
}
