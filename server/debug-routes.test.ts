import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fetchDebugStats } from "./testing/debug-stats.ts";
import { TerminalClient } from "./testing/terminal-client.ts";
import { startTestServer, type TestServer } from "./testing/test-server.ts";
import { waitFor } from "./testing/wait.ts";
import type { DebugStats } from "./debug-routes.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ maxConnections: 77, maxConnectionsPerAddress: 7 });
});
afterAll(async () => {
  await server?.stop();
});

describe("GET /api/debug/stats", () => {
  it("counts sessions, running PTYs, sockets, streams, connections and HTTP connections as they are", async () => {
    const before = await fetchDebugStats(server.url, server.token);
    expect(before).toMatchObject({ sessions: 0, runningPtys: 0, openSockets: 0, terminalStreams: 0, terminalConnections: 0, httpConnections: 1 });
    expect(before.connectionLimits).toEqual({ perAddress: 7, total: 77 });
    expect(before.rssBytes).toBeGreaterThan(10 * 1024 * 1024);
    expect(before.heapUsedBytes).toBeGreaterThan(0);
    expect(before.activeResources).toEqual(expect.objectContaining({ TCPServerWrap: expect.any(Number) }));

    // Set up through the registry, not HTTP: a kept-alive fetch connection would count too.
    const running = server.registry.create({ command: ["sleep", "60"] });
    const ending = server.registry.create({ command: ["true"] });
    await waitFor(() => server.registry.get(ending.id)!.status === "exited", { message: "true exited" });
    const a = await TerminalClient.connect(server.url, running.id, { token: server.token });
    const b = await TerminalClient.connect(server.url, running.id, { token: server.token });
    const during = await fetchDebugStats(server.url, server.token);
    expect(during).toMatchObject({ sessions: 2, runningPtys: 1, openSockets: 2, terminalStreams: 1, terminalConnections: 2, httpConnections: 3 });

    await a.close();
    await b.close();
    await server.registry.remove(running.id);
    const after = await waitFor(async () => {
      const s = await fetchDebugStats(server.url, server.token);
      return s.openSockets === 0 && s.httpConnections === 1 && s.runningPtys === 0 ? s : null;
    });
    expect(after).toMatchObject({ sessions: 1, terminalStreams: 0, terminalConnections: 0 });
  });

  it("answers the global token only: an agent token gets 403, no credential 401", async () => {
    const created = await server.api("/api/tokens", { method: "POST", json: { name: "reader", capabilities: ["terminal:read", "terminal:write"] } });
    expect(created.status).toBe(201);
    const { token } = (await created.json()) as { token: string };
    const agent = await fetch(`${server.url}/api/debug/stats`, { headers: { authorization: `Bearer ${token}` } });
    expect(agent.status).toBe(403);
    expect(((await agent.json()) as { error: { code: string } }).error.code).toBe("CAPABILITY_DENIED");
    const anonymous = await fetch(`${server.url}/api/debug/stats`);
    expect(anonymous.status).toBe(401);
    const global = (await (await server.api("/api/debug/stats")).json()) as DebugStats;
    expect(typeof global.openSockets).toBe("number");
  });
});
