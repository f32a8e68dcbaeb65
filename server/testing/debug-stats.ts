import { request } from "node:http";
import type { DebugStats } from "../debug-routes.ts";

/**
 * GET /api/debug/stats on a connection of its own that closes after the answer, so asking never
 * leaves a kept-alive connection behind to be counted next time (the asking one counts as 1).
 */
export function fetchDebugStats(baseUrl: string, token: string): Promise<DebugStats> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: hostname, port, path: "/api/debug/stats", agent: false, headers: { authorization: `Bearer ${token}`, connection: "close" } },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c) => (body += c));
        res.on("end", () => {
          if (res.statusCode !== 200) reject(new Error(`debug stats answered ${res.statusCode}: ${body}`));
          else resolve(JSON.parse(body) as DebugStats);
        });
      },
    );
    req.on("error", reject);
    req.end();
  });
}

/** The figures a leak shows in: what must return to its value before the churn. */
export function leakFigures(stats: DebugStats): Record<string, number | null> {
  const resources = stats.activeResources ?? {};
  return {
    sessions: stats.sessions,
    runningPtys: stats.runningPtys,
    openSockets: stats.openSockets,
    terminalStreams: stats.terminalStreams,
    terminalConnections: stats.terminalConnections,
    httpConnections: stats.httpConnections,
    tcpHandles: resources.TCPSocketWrap ?? 0,
    timers: resources.Timeout ?? 0,
  };
}
