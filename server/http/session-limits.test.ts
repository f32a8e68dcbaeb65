/** The session cap (`--max-sessions`) and the bound on a grid's cells, on a real server. */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ClientFrame } from "../contract/frames.ts";
import { MAX_GRID_CELLS } from "../contract/protocol.ts";
import { FAKE_CLAUDE } from "../testing/hybrid-fixture.ts";
import { TerminalClient } from "../testing/terminal-client.ts";
import { startTestServer, type TestServer } from "../testing/test-server.ts";
import { waitFor } from "../testing/wait.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ maxSessions: 3 });
});
afterAll(async () => {
  await server?.stop();
});

const create = (body: Record<string, unknown> = { command: ["sleep", "60"] }) => server.api("/api/sessions", { method: "POST", json: body });

describe("the session cap", () => {
  it("answers the session past it with 429 RATE_LIMITED and a clear message; an exited one counts until deleted", async () => {
    const ids: string[] = [];
    for (const command of [["sleep", "60"], ["sleep", "60"], ["true"]]) {
      const res = await create({ command });
      expect(res.status).toBe(201);
      ids.push(((await res.json()) as { id: string }).id);
    }
    await waitFor(() => server.registry.get(ids[2]!)?.status === "exited", { message: "the third exited" });
    const refused = await create();
    expect(refused.status).toBe(429);
    expect(await refused.json()).toEqual({
      error: { code: "RATE_LIMITED", message: "this server already holds 3 sessions, its limit (--max-sessions); delete some first" },
    });
    // A hybrid session is a session too.
    expect((await create({ hybrid: { agent: "claude" }, cwd: server.dataDir, env: { WEBMUX_CLAUDE_BIN: FAKE_CLAUDE } })).status).toBe(429);
    expect(server.registry.list().length).toBe(3);
    expect((await server.api(`/api/sessions/${ids[2]}`, { method: "DELETE" })).status).toBe(204);
    expect((await create()).status).toBe(201);
  });
});

describe("a grid's cells", () => {
  it(`are at most ${MAX_GRID_CELLS}: a bigger grid is a 400 at creation and an ignored resize`, async () => {
    for (const id of server.registry.list().map((s) => s.id)) await server.registry.remove(id);
    const tooBig = await create({ command: ["sleep", "60"], cols: 1000, rows: 1000 });
    expect(tooBig.status).toBe(400);
    expect(((await tooBig.json()) as { error: { message: string } }).error.message).toBe(`a grid of 1000×1000 is over ${MAX_GRID_CELLS} cells (columns × rows)`);
    const largest = await create({ command: ["sleep", "60"], cols: 1000, rows: 250 });
    expect(largest.status).toBe(201);
    const { id } = (await largest.json()) as { id: string };
    const session = server.registry.get(id)!;
    const resizes = vi.spyOn(session, "resize");
    const client = await TerminalClient.connect(server.url, id, { token: server.token });
    // Written by hand: the contract's own encoder refuses to encode it.
    client.ws.send(Buffer.concat([Buffer.from([ClientFrame.RESIZE]), Buffer.from(JSON.stringify({ cols: 1000, rows: 251 }))]));
    client.resize(500, 400);
    await waitFor(() => session.cols === 500, { message: "the good resize applied" });
    expect(resizes.mock.calls).toEqual([[500, 400]]);
    await client.close();
  });
});
