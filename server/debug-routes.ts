import type { Server } from "node:http";
import { ErrorCode } from "./contract/types.ts";
import type { WebSocketAcceptor } from "./hub/accept.ts";
import type { ConnectionLimits } from "./hub/connection-limit.ts";
import type { TerminalHub } from "./hub/terminal-hub.ts";
import type { SessionRegistry } from "./session/registry.ts";
import type { App, RouteContext } from "./http/app.ts";
import { ApiError } from "./http/errors.ts";

/** `GET /api/debug/stats`: what leak and load tests (and a curious operator) count. */
export type DebugStats = {
  /** sessions listed, exited ones included */
  sessions: number;
  /** sessions whose program is running (each holds a PTY) */
  runningPtys: number;
  /** WebSockets open across every endpoint */
  openSockets: number;
  /** terminal streams (sessions with at least one /ws/s connection) */
  terminalStreams: number;
  /** /ws/s connections attached to a stream */
  terminalConnections: number;
  /** TCP connections of the HTTP server (WebSockets included); null where the runtime cannot count them */
  httpConnections: number | null;
  /** process.getActiveResourcesInfo() counted by kind (Timeout, TCPSocketWrap, …): handles and timers keeping the process alive (unref'd ones do not show); null where the runtime lacks it */
  activeResources: Record<string, number> | null;
  connectionLimits: ConnectionLimits;
  rssBytes: number;
  heapUsedBytes: number;
};

export type DebugSources = {
  registry: SessionRegistry;
  acceptor: WebSocketAcceptor;
  terminals: TerminalHub;
  http: Server;
};

/** The figures, read now. */
export async function collectDebugStats({ registry, acceptor, terminals, http }: DebugSources): Promise<DebugStats> {
  const sessions = registry.list();
  const hub = terminals.stats();
  const memory = process.memoryUsage();
  return {
    sessions: sessions.length,
    runningPtys: sessions.filter((s) => s.status === "running").length,
    openSockets: acceptor.openSockets,
    terminalStreams: hub.streams,
    terminalConnections: hub.connections,
    httpConnections: await countConnections(http),
    activeResources: countActiveResources(),
    connectionLimits: { ...acceptor.limiter.limits },
    rssBytes: memory.rss,
    heapUsedBytes: memory.heapUsed,
  };
}

function countConnections(http: Server): Promise<number | null> {
  if (typeof http.getConnections !== "function") return Promise.resolve(null);
  return new Promise((resolve) => {
    try {
      http.getConnections((err, count) => resolve(err ? null : count));
    } catch {
      resolve(null);
    }
  });
}

function countActiveResources(): Record<string, number> | null {
  const info = (process as { getActiveResourcesInfo?: () => string[] }).getActiveResourcesInfo;
  if (typeof info !== "function") return null;
  const counts: Record<string, number> = {};
  for (const kind of info.call(process)) counts[kind] = (counts[kind] ?? 0) + 1;
  return counts;
}

/** Register `GET /api/debug/stats`: the global token only (the figures describe the whole server). */
export function registerDebugRoutes(app: App, sources: DebugSources): void {
  app.route("GET", "/api/debug/stats", (ctx: RouteContext) => {
    if (ctx.auth.principal.kind !== "global") throw new ApiError(ErrorCode.CAPABILITY_DENIED, "only the global token may read debug figures");
    return collectDebugStats(sources);
  });
}
