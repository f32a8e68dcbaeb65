import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentReadResponse } from "../contract/types.ts";
import { TerminalClient } from "../testing/terminal-client.ts";
import type { TestServer } from "../testing/test-server.ts";
import { waitFor } from "../testing/wait.ts";
import { AgentSocket, atPrompt, createToken, get, post, run, shellSession, startAgentServer } from "./agent-testing.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startAgentServer();
});
afterAll(async () => {
  await server?.stop();
});

type EventFrame = { type: "event"; event: { event: string; data: Record<string, unknown> } };
const isEvent = (name: string, pane: string) => (f: { type: string }) =>
  f.type === "event" && (f as EventFrame).event.event === name && (f as EventFrame).event.data.pane_id === pane;

describe("WS /ws/agent", () => {
  it("answers run frames by id, ping with pong, and bad frames with error frames of the same codes", async () => {
    const pane = (await shellSession(server, "bash")).id;
    const socket = await AgentSocket.connect(server);
    socket.send({ type: "run", id: "req-1", command: "printf 'ws\\n'; (exit 5)", pane_id: pane, timeout: 60_000 });
    socket.send({ type: "ping" });
    socket.send({ type: "subscribe" });
    const result = await socket.next((f) => f.type === "result" && f.id === "req-1", "result of req-1");
    expect(result).toMatchObject({ exit_code: 5, stdout: "ws\n", stderr: "", pane_id: pane, method: "shell_integration" });
    await socket.next((f) => f.type === "pong", "pong");

    // The run's own command is reported like any other, under the command it was asked to run.
    const finished = (await socket.next(isEvent("command_finished", pane), "command_finished of req-1")) as unknown as EventFrame;
    expect(finished.event.data).toMatchObject({ command: "printf 'ws\\n'; (exit 5)", exit_code: 5, stdout: "ws\n", method: "shell_integration" });

    socket.ws.send("{oops");
    socket.send({ type: "run", id: "req-2", pane_id: pane });
    socket.send({ type: "run", id: "req-3", command: "true", pane_id: "zzzzzzzz" });
    expect(await socket.next((f) => f.type === "error" && f.id === undefined, "error for bad JSON")).toMatchObject({ error: { code: "INVALID_REQUEST" } });
    expect(await socket.next((f) => f.type === "error" && f.id === "req-2", "error for a run without command")).toMatchObject({ error: { code: "INVALID_REQUEST" } });
    expect(await socket.next((f) => f.type === "error" && f.id === "req-3", "error for an unknown pane")).toMatchObject({ error: { code: "NOT_FOUND" } });
    socket.close();
  });

  it("pushes command_started and command_finished for a command a person typed over /ws/s/{id}, and session events", async () => {
    const socket = await AgentSocket.connect(server);
    const pane = (await shellSession(server, "bash")).id;
    await socket.next(isEvent("session_created", pane), "session_created");
    await atPrompt(server, pane);
    const person = await TerminalClient.connect(server.url, pane, { token: server.token, client: "person" });
    person.type("echo typed-by-a-person; (exit 4)\r");
    const started = (await socket.next(isEvent("command_started", pane), "command_started")) as unknown as EventFrame;
    expect(started.event.data).toEqual({ pane_id: pane, command: "echo typed-by-a-person; (exit 4)" });
    const finished = (await socket.next(isEvent("command_finished", pane), "command_finished")) as unknown as EventFrame;
    expect(finished.event.data).toMatchObject({
      pane_id: pane,
      command: "echo typed-by-a-person; (exit 4)",
      exit_code: 4,
      stdout: "typed-by-a-person\n",
      method: "shell_integration",
      duration_ms: expect.any(Number),
    });
    person.type("exit 3\r");
    const exited = (await socket.next(isEvent("session_exited", pane), "session_exited")) as unknown as EventFrame;
    expect(exited.event.data.exit_code).toBe(3);
    await person.close();
    socket.close();
  });

  it("gives a run's slot back when its socket closes", async () => {
    const pane = (await shellSession(server, "bash")).id;
    const socket = await AgentSocket.connect(server);
    socket.send({ type: "run", id: "long", command: "sleep 30", pane_id: pane });
    await waitFor(() => server.agent.trackerOf(pane)?.running, { message: "sleep running" });
    expect(server.agent.slots.used("global")).toBe(1);
    socket.close();
    await waitFor(() => server.agent.slots.used("global") === 0, { message: "slot given back" });
    await post(server, "/api/agent/send", { pane_id: pane, command: "\x03", enter: false });
  });
});

describe("WS /ws/agent access", () => {
  it("refuses at the handshake, with 403, a token lacking terminal:write (terminal:write implies terminal:read)", async () => {
    const reader = await createToken(server, ["terminal:read"]);
    await expect(AgentSocket.connect(server, reader.token)).rejects.toThrow("handshake answered 403");
    const both = await createToken(server, ["terminal:read", "terminal:write"]);
    (await AgentSocket.connect(server, both.token)).close();
  });

  it("closes a connection whose token expires while it is open", async () => {
    const expiring = await createToken(server, ["terminal:read", "terminal:write"], 1);
    const socket = await AgentSocket.connect(server, expiring.token);
    socket.send({ type: "ping", id: "before" });
    await socket.next((f) => f.type === "pong" && f.id === "before", "pong while the token is live");
    // Each ping is checked against the token again; once it has expired the answer is a close, not a pong.
    await waitFor(
      () => {
        if (socket.closeCode === null) socket.send({ type: "ping" });
        return socket.closeCode === 1008;
      },
      { timeout: 5_000, interval: 100, message: "socket closed once its token expired" },
    );
  });

  it("closes a connection whose token is revoked, and every connection when the API is switched off", async () => {
    const agent = await createToken(server, ["terminal:read", "terminal:write"]);
    const byAgent = await AgentSocket.connect(server, agent.token);
    const byGlobal = await AgentSocket.connect(server);
    expect((await server.api(`/api/tokens/${agent.id}`, { method: "DELETE" })).status).toBe(204);
    await waitFor(() => byAgent.closeCode === 1008, { message: "revoked token's socket closed" });
    expect(byGlobal.closeCode).toBeNull();
    try {
      await server.api("/api/settings", { method: "PUT", json: { open_api: { enabled: false } } });
      await waitFor(() => byGlobal.closeCode === 1008, { message: "socket closed when the API was disabled" });
    } finally {
      await server.api("/api/settings", { method: "PUT", json: { open_api: { enabled: true } } });
    }
  });
});

describe("a session that goes away", () => {
  it("answers its waiting runs with 404 NOT_FOUND", async () => {
    const pane = (await shellSession(server, "bash")).id;
    const running = run(server, { pane_id: pane, command: "sleep 20" });
    await waitFor(() => server.agent.trackerOf(pane)?.running, { message: "sleep running" });
    const waiting = run(server, { pane_id: pane, command: "echo never" });
    await waitFor(() => server.agent.pendingRuns(pane) === 2, { message: "second run queued" });
    expect((await server.api(`/api/sessions/${pane}`, { method: "DELETE" })).status).toBe(204);
    const [first, second] = await Promise.all([running, waiting]);
    expect(first.status).toBe(200); // the running command ended with the shell
    expect(first.body.exit_code).not.toBe(0);
    expect(second.status).toBe(404);
    expect(second.body).toMatchObject({ error: { code: "NOT_FOUND" } });
  });
});

describe("POST /api/agent/send and GET /api/agent/read", () => {
  it("types into the session without waiting, and reads its screen, scrollback, cursor and cwd", async () => {
    const pane = (await shellSession(server, "bash")).id;
    await atPrompt(server, pane);
    const sent = await post<{ ok: boolean; pane_id: string }>(server, "/api/agent/send", { pane_id: pane, command: "cd /tmp && echo sent-$((40+2))" });
    expect(sent.body).toEqual({ ok: true, pane_id: pane });
    const read = await waitFor(async () => {
      const r = await get<AgentReadResponse>(server, `/api/agent/read?pane_id=${pane}&scrollback=50`);
      return r.body.lines.includes("sent-42") && r.body.cwd === "/tmp" ? r.body : null;
    }, { message: "sent command's output on screen" });
    expect(read.pane_id).toBe(pane);
    expect(read.cursor.row).toBeGreaterThan(read.lines.indexOf("sent-42"));
    expect(read.scrollback).toEqual([]);
    // "active" is the session used last: the one we just typed into
    expect((await get<AgentReadResponse>(server, "/api/agent/read")).body.pane_id).toBe(pane);
  });

  it("reads colours as SGR escapes with strip_ansi=false, and plain text by default", async () => {
    const pane = (await shellSession(server, "bash")).id;
    await atPrompt(server, pane);
    await post(server, "/api/agent/send", { pane_id: pane, command: "printf 'ok \\033[1;31mFAILED\\033[0m 3\\n'" });
    const styled = await waitFor(async () => {
      const r = await get<AgentReadResponse>(server, `/api/agent/read?pane_id=${pane}&strip_ansi=false&scrollback=10`);
      return r.body.lines.find((line) => line.includes("FAILED") && !line.includes("printf")) ?? null;
    }, { message: "the coloured line on screen" });
    expect(styled).toBe("ok \x1b[0;1;31mFAILED\x1b[0m 3");
    const plain = (await get<AgentReadResponse>(server, `/api/agent/read?pane_id=${pane}`)).body.lines;
    expect(plain).toContain("ok FAILED 3");
    expect(plain.join("\n")).not.toContain("\x1b");
    expect((await get(server, `/api/agent/read?pane_id=${pane}&strip_ansi=maybe`)).status).toBe(400);
  });
});

describe('pane_id "auto" / "active"', () => {
  it("is the session a person last typed a command into, or the Agent API last used", async () => {
    const typedInto = (await shellSession(server, "bash")).id;
    await atPrompt(server, typedInto);
    const person = await TerminalClient.connect(server.url, typedInto, { token: server.token, client: "person-active" });
    await person.waitForFrames((frames) => frames.some((f) => f.type === "status"));
    const usedByAgent = (await shellSession(server, "bash")).id;
    expect((await run(server, { pane_id: usedByAgent, command: "true" })).status).toBe(200);
    expect((await run(server, { command: "echo where" })).body.pane_id).toBe(usedByAgent);

    person.type("echo person-was-here\r"); // the same client, already attached: only the input is new
    await waitFor(async () => (await get<AgentReadResponse>(server, "/api/agent/read")).body.pane_id === typedInto, { message: "the typed-into session active" });
    expect((await run(server, { command: "echo where" })).body.pane_id).toBe(typedInto);
    await person.close();
  });

  it("follows keystrokes into a program that is not a shell, and not auto-replies", async () => {
    const created = await server.api("/api/sessions", { method: "POST", headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" }, body: JSON.stringify({ command: ["cat"] }) });
    const program = ((await created.json()) as { id: string }).id;
    const person = await TerminalClient.connect(server.url, program, { token: server.token, client: "person-cat" });
    await person.waitForFrames((frames) => frames.some((f) => f.type === "status"));
    const later = (await shellSession(server, "bash")).id;
    expect((await get<AgentReadResponse>(server, "/api/agent/read")).body.pane_id).toBe(later);

    person.autoReply("\x1b[1;1R"); // a terminal's answer is not a person using the session
    await person.roundTrip();
    expect((await get<AgentReadResponse>(server, "/api/agent/read")).body.pane_id).toBe(later);

    person.type("typed into cat\r");
    await waitFor(async () => (await get<AgentReadResponse>(server, "/api/agent/read")).body.pane_id === program, { message: "the cat session active" });
    await person.close();
  });
});
