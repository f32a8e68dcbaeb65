import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentReadResponse } from "../contract/types.ts";
import { sha256Hex } from "../http/credentials.ts";
import { TerminalClient } from "../testing/terminal-client.ts";
import { startTestServer, type TestServer } from "../testing/test-server.ts";
import { waitFor } from "../testing/wait.ts";
import { AgentSocket, atPrompt, createToken, get, post, run, shellSession, startAgentServer } from "./agent-testing.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startAgentServer();
});
afterAll(async () => {
  await server?.stop();
});

const both = ["terminal:read", "terminal:write"] as const;

/** A FIFO a run can block on until the test writes a line into it. */
function fifo(name: string): string {
  const path = join(server.dataDir, name);
  execFileSync("mkfifo", [path]);
  return path;
}

describe("tokens", () => {
  it("creates dnt_ tokens stored only as SHA-256, lists them without secrets, and lets only the global token manage them", async () => {
    const created = await post<{ token: string; token_info: Record<string, unknown> }>(server, "/api/tokens", {
      name: "monitoring-agent",
      capabilities: ["terminal:read"],
      expires_in: 86400,
    });
    expect(created.status).toBe(201);
    expect(created.body.token).toMatch(/^dnt_[0-9a-f]{64}$/);
    expect(created.body.token_info).toMatchObject({ name: "monitoring-agent", capabilities: ["terminal:read"], last_used_at: null });
    const stored = readFileSync(join(server.dataDir, "agent-tokens.json"), "utf8");
    expect(stored).not.toContain(created.body.token);
    expect(stored).toContain(sha256Hex(created.body.token));
    const listed = await get<{ tokens: Array<Record<string, unknown>> }>(server, "/api/tokens");
    expect(listed.body.tokens.map((t) => t.id)).toContain(created.body.token_info.id);
    expect(JSON.stringify(listed.body)).not.toContain(created.body.token);

    const agent = await createToken(server, [...both]);
    expect((await post(server, "/api/tokens", { name: "x", capabilities: ["terminal:read"] }, agent.token)).status).toBe(403);
    expect((await get(server, "/api/tokens", agent.token)).status).toBe(403);
    expect((await post(server, "/api/tokens", { name: "x", capabilities: ["terminal:admin"] })).status).toBe(400);
  });

  it("refuses expired and revoked tokens with 401", async () => {
    const pane = (await shellSession(server, "bash")).id;
    const expiring = await createToken(server, ["terminal:read"], 1);
    expect((await get(server, `/api/agent/read?pane_id=${pane}`, expiring.token)).status).toBe(200);
    await waitFor(async () => (await get(server, `/api/agent/read?pane_id=${pane}`, expiring.token)).status === 401, { timeout: 5_000, interval: 100, message: "expired token refused" });

    const revoked = await createToken(server, [...both]);
    expect((await get(server, `/api/agent/read?pane_id=${pane}`, revoked.token)).status).toBe(200);
    const del = await server.api(`/api/tokens/${revoked.id}`, { method: "DELETE" });
    expect(del.status).toBe(204);
    const after = await get<{ error: { code: string } }>(server, `/api/agent/read?pane_id=${pane}`, revoked.token);
    expect(after.status).toBe(401);
    expect(after.body.error.code).toBe("UNAUTHORIZED");
    expect((await server.api(`/api/tokens/${revoked.id}`, { method: "DELETE" })).status).toBe(404);
  });
});

describe("a read-only token", () => {
  it("reads, but run, send and /ws/agent are refused with 403 and its /ws/s input is ignored", async () => {
    const pane = (await shellSession(server, "bash")).id;
    await atPrompt(server, pane);
    const reader = await createToken(server, ["terminal:read"]);
    const read = await get<AgentReadResponse>(server, `/api/agent/read?pane_id=${pane}&scrollback=10`, reader.token);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ pane_id: pane, cursor: { row: expect.any(Number), col: expect.any(Number) } });
    expect(Array.isArray(read.body.lines) && Array.isArray(read.body.scrollback)).toBe(true);

    const denied = await run(server, { pane_id: pane, command: "true" }, reader.token);
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ error: { code: "CAPABILITY_DENIED" } });
    expect((await post(server, "/api/agent/send", { pane_id: pane, command: "true" }, reader.token)).status).toBe(403);
    await expect(AgentSocket.connect(server, reader.token)).rejects.toThrow("403");

    const observer = await TerminalClient.connect(server.url, pane, { token: reader.token, client: "read-only-client" });
    await observer.waitForFrames((frames) => frames.some((f) => f.type === "status"));
    observer.type("echo readonly-$((6*7))\r");
    // A resync is answered after every earlier frame of this connection was handled: the input has been seen by then.
    const positions = () => observer.frames.filter((f) => f.type === "position").length;
    const before = positions();
    observer.resync();
    await observer.waitForFrames(() => positions() > before);
    const marker = await run(server, { pane_id: pane, command: "echo marker-$((2*3))" });
    expect(marker.body.stdout).toBe("marker-6\n");
    const screen = await get<AgentReadResponse>(server, `/api/agent/read?pane_id=${pane}&scrollback=100`);
    expect([...screen.body.scrollback!, ...screen.body.lines].join("\n")).not.toContain("readonly-");
    await observer.close();
  });
});

describe("a write-only token", () => {
  it("reads too, since what it runs answers with the output: sessions, screens, /ws/s and /ws/agent, as with both capabilities", async () => {
    const pane = (await shellSession(server, "bash")).id;
    await atPrompt(server, pane);
    const writer = await createToken(server, ["terminal:write"]);
    const ran = await run(server, { pane_id: pane, command: "echo written-$((6*7))" }, writer.token);
    expect(ran.body.stdout).toBe("written-42\n");
    expect((await get(server, "/api/sessions", writer.token)).status).toBe(200);
    expect((await get(server, `/api/sessions/${pane}`, writer.token)).status).toBe(200);
    expect((await get(server, `/api/agent/read?pane_id=${pane}`, writer.token)).status).toBe(200);
    expect((await get(server, "/api/settings", writer.token)).status).toBe(200);
    const terminal = await TerminalClient.connect(server.url, pane, { token: writer.token, client: "write-only-client" });
    terminal.type("echo typed-$((6*7))\r");
    await terminal.waitForText("typed-42");
    await terminal.close();
    (await AgentSocket.connect(server, writer.token)).close();
  });
});

describe("run concurrency", () => {
  it("allows 10 runs per token: the 11th gets 429 with Retry-After: 5 while another token still gets its 10", async () => {
    const [blocked, other] = [(await shellSession(server, "bash")).id, (await shellSession(server, "bash")).id];
    const a = await createToken(server, [...both]);
    const b = await createToken(server, [...both]);
    const gate = fifo("gate-a");
    const aRuns = [run(server, { pane_id: blocked, command: `read -r line < ${gate}; echo "got $line"` }, a.token)];
    for (let i = 1; i < 10; i++) aRuns.push(run(server, { pane_id: blocked, command: `echo a${i}` }, a.token));
    await waitFor(() => server.agent.slots.used(a.id) === 10, { message: "ten runs of token A accepted" });

    const eleventh = await run(server, { pane_id: other, command: "true" }, a.token);
    expect(eleventh.status).toBe(429);
    expect(eleventh.headers.get("retry-after")).toBe("5");
    expect(eleventh.body).toMatchObject({ error: { code: "RATE_LIMITED" } });

    const bResults = await Promise.all(Array.from({ length: 10 }, (_, i) => run(server, { pane_id: other, command: `echo b${i}` }, b.token)));
    expect(bResults.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(bResults.map((r) => r.body.stdout)).toEqual(Array.from({ length: 10 }, (_, i) => `b${i}\n`));
    expect(server.agent.slots.used(a.id)).toBe(10); // A's runs were still waiting all along

    await writeFile(gate, "go\n");
    const aResults = await Promise.all(aRuns);
    expect(aResults.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(aResults[0]!.body.stdout).toBe("got go\n");
    expect((await run(server, { pane_id: other, command: "true" }, a.token)).status).toBe(200);
  });

  it("gives the slot of a client that disconnects mid-run back", async () => {
    const [blocked, other] = [(await shellSession(server, "bash")).id, (await shellSession(server, "bash")).id];
    const c = await createToken(server, [...both]);
    const gate = fifo("gate-c");
    const callers = Array.from({ length: 10 }, () => new AbortController());
    const pending = callers.map((caller, i) =>
      run(server, { pane_id: blocked, command: i === 0 ? `read -r line < ${gate}` : `echo c${i}` }, c.token, caller.signal).catch((err: Error) => err),
    );
    await waitFor(() => server.agent.slots.used(c.id) === 10, { message: "ten runs of token C accepted" });
    await waitFor(() => server.agent.trackerOf(blocked)?.running, { message: "the first run's command running" });
    expect((await run(server, { pane_id: other, command: "true" }, c.token)).status).toBe(429);

    callers[0]!.abort(); // the caller of the running command goes away
    await waitFor(async () => (await run(server, { pane_id: other, command: "true" }, c.token)).status === 200, { message: "a slot freed", interval: 50 });
    await writeFile(gate, "go\n");
    const rest = await Promise.all(pending.slice(1));
    expect(rest.map((r) => (r instanceof Error ? r.message : r.status))).toEqual(Array(9).fill(200));
    await pending[0];
  });
});

describe("with open_api disabled", () => {
  it("answers every Agent API route and /ws/agent with 403 CAPABILITY_DENIED until it is enabled", async () => {
    const off = await startTestServer();
    try {
      const pane = (await shellSession(off, "bash")).id;
      for (const res of [
        await run(off, { pane_id: pane, command: "true" }),
        await post(off, "/api/agent/send", { pane_id: pane, command: "true" }),
        await get(off, `/api/agent/read?pane_id=${pane}`),
      ]) {
        expect(res.status).toBe(403);
        expect(res.body).toMatchObject({ error: { code: "CAPABILITY_DENIED", message: expect.any(String) } });
      }
      await expect(AgentSocket.connect(off)).rejects.toThrow("403");
      const enable = await off.api("/api/settings", { method: "PUT", json: { open_api: { enabled: true } } });
      expect(enable.status).toBe(200);
      expect((await run(off, { pane_id: pane, command: "true" })).body.exit_code).toBe(0);
    } finally {
      await off.stop();
    }
  });
});

describe("errors", () => {
  it("uses the unified shape: bad JSON 400, missing command 400, unknown pane 404, oversize body 413", async () => {
    const bad = await server.api("/api/agent/run", { method: "POST", body: "{not json", headers: { "content-type": "application/json" } });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { code: "INVALID_REQUEST" } });
    expect((await run(server, { cwd: "/tmp" })).body).toMatchObject({ error: { code: "INVALID_REQUEST" } });
    expect((await run(server, { command: "true", timeout: 3_600_001 })).status).toBe(400);
    const unknown = await run(server, { command: "true", pane_id: "zzzzzzzz" });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ error: { code: "NOT_FOUND" } });
    expect((await get(server, "/api/agent/read?pane_id=zzzzzzzz")).status).toBe(404);
    expect((await get(server, "/api/agent/read?scrollback=10001")).status).toBe(400);
    const huge = await server.api("/api/agent/run", { method: "POST", json: { command: "x".repeat(1024 * 1024 + 1) } });
    expect(huge.status).toBe(413);
    expect(await huge.json()).toMatchObject({ error: { code: "PAYLOAD_TOO_LARGE" } });
  });
});
