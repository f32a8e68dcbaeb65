import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionInfo } from "../contract/types.ts";
import { startTestServer, TEST_SHELL_COMMAND, type TestServer } from "../testing/test-server.ts";
import { waitFor } from "../testing/wait.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.stop();
});

async function bufferText(id: string): Promise<string> {
  const res = await server.api(`/api/sessions/${id}/buffer`);
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer()).toString("utf8");
}

async function info(id: string): Promise<SessionInfo> {
  const res = await server.api(`/api/sessions/${id}`);
  expect(res.status).toBe(200);
  return (await res.json()) as SessionInfo;
}

async function expectError(res: Response, status: number, code: string) {
  expect(res.status).toBe(status);
  const body = (await res.json()) as { error: { code: string; message: string } };
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe("string");
}

describe("sessions over HTTP", () => {
  it("creates a bash session whose output lands in the ring, with buffer headers", async () => {
    const s = await server.createSession({ command: [...TEST_SHELL_COMMAND, "-c", "echo hello-ring; exit 0"], title: "greeter" });
    expect(s.id).toMatch(/^[a-z0-9]{8}$/);
    expect(s.title).toBe("greeter");
    expect(s.command).toEqual([...TEST_SHELL_COMMAND, "-c", "echo hello-ring; exit 0"]);
    expect(s.generation.startsWith(server.registry.bootId + ".")).toBe(true);
    expect(s.cols).toBe(80);
    expect(s.rows).toBe(24);
    await waitFor(async () => (await info(s.id)).status === "exited");
    const res = await server.api(`/api/sessions/${s.id}/buffer`);
    expect(res.headers.get("x-webmux-generation")).toBe(s.generation);
    expect(res.headers.get("x-webmux-start")).toBe("0");
    expect(res.headers.get("x-webmux-truncated")).toBe("false");
    const text = Buffer.from(await res.arrayBuffer()).toString("utf8");
    expect(Number(res.headers.get("x-webmux-end"))).toBe(Buffer.byteLength(text));
    expect(text).toContain("hello-ring");
  });

  it("reports the exit code and keeps the exited session listed with its buffer", async () => {
    const s = await server.createSession({ command: ["sh", "-c", "echo bye; exit 5"] });
    const done = await waitFor(async () => {
      const i = await info(s.id);
      return i.status === "exited" ? i : null;
    });
    expect(done.exitCode).toBe(5);
    expect(done.pid).toBeNull();
    const list = (await (await server.api("/api/sessions")).json()) as { sessions: SessionInfo[] };
    expect(list.sessions.map((x: SessionInfo) => x.id)).toContain(s.id);
    expect(await bufferText(s.id)).toContain("bye");
  });

  it("passes cwd, env, size and the default login shell", async () => {
    const s = await server.createSession({
      command: [...TEST_SHELL_COMMAND, "-c", 'echo "cwd=$PWD var=$GREETING term=$TERM"; stty size'],
      cwd: "/tmp",
      env: { GREETING: "hola" },
      cols: 100,
      rows: 30,
    });
    await waitFor(async () => (await bufferText(s.id)).includes("30 100"));
    const text = await bufferText(s.id);
    expect(text).toContain("cwd=/tmp var=hola term=xterm-256color");
    const shell = await server.createSession({});
    expect(shell.command).toEqual(["/bin/bash", "-l"]);
    expect(shell.status).toBe("running");
    expect(shell.pid).toBeGreaterThan(0);
  });

  it("answers a restart whose cwd vanished with 400 and one already under way with 409, never 500", async () => {
    const dir = mkdtempSync(join(tmpdir(), "webmux-vanishing-"));
    const gone = await server.createSession({ command: ["sleep", "100"], cwd: dir });
    rmSync(dir, { recursive: true });
    const vanished = await server.api(`/api/sessions/${gone.id}/restart`, { method: "POST" });
    expect(vanished.status).toBe(400);
    const body = (await vanished.json()) as { error: { code: string; message: string } };
    expect(body.error).toMatchObject({ code: "INVALID_REQUEST", message: expect.stringContaining("working directory not found") });
    expect((await info(gone.id)).status).toBe("exited"); // the session is still there, and says it is not running

    // A program that ignores SIGHUP takes the whole grace to end: the other restarts arrive meanwhile.
    // It says so once the trap is set: a SIGHUP before that would end it at once, and a later restart would then succeed.
    const busy = await server.createSession({ command: ["bash", "-c", "trap '' HUP; echo hup-ignored; while :; do sleep 1; done"] });
    await waitFor(async () => (await bufferText(busy.id)).includes("hup-ignored"));
    const answers = await Promise.all([1, 2, 3].map(() => server.api(`/api/sessions/${busy.id}/restart`, { method: "POST" })));
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses[0]).toBe(200);
    expect(statuses.slice(1)).toEqual([409, 409]);
    for (const r of answers.filter((a) => a.status === 409)) expect(((await r.json()) as { error: { code: string } }).error.code).toBe("CONFLICT");
    expect((await info(busy.id)).status).toBe("running");
    for (const id of [gone.id, busy.id]) await server.api(`/api/sessions/${id}`, { method: "DELETE" });
  });

  it("renames, restarts with a new generation and deletes", async () => {
    const s = await server.createSession({ command: [...TEST_SHELL_COMMAND, "-c", "echo run-$$; sleep 100"] });
    const renamed = await server.api(`/api/sessions/${s.id}`, { method: "PATCH", json: { title: "build" } });
    expect(renamed.status).toBe(200);
    expect(((await renamed.json()) as SessionInfo).title).toBe("build");
    await waitFor(async () => (await bufferText(s.id)).includes("run-"));
    const restarted = await server.api(`/api/sessions/${s.id}/restart`, { method: "POST" });
    expect(restarted.status).toBe(200);
    const after = (await restarted.json()) as SessionInfo;
    expect(after.generation).not.toBe(s.generation);
    expect(after.status).toBe("running");
    expect(after.title).toBe("build");
    const head = await server.api(`/api/sessions/${s.id}/buffer`);
    expect(head.headers.get("x-webmux-generation")).toBe(after.generation);
    expect(head.headers.get("x-webmux-start")).toBe("0");
    // The new run's ring holds only the new run: its own pid's line, not the first run's.
    await waitFor(async () => (await bufferText(s.id)).includes(`run-${after.pid}`), { message: "second run's output" });
    expect(await bufferText(s.id)).not.toContain(`run-${s.pid}`);
    const pid = after.pid!;
    const del = await server.api(`/api/sessions/${s.id}`, { method: "DELETE" });
    expect(del.status).toBe(204);
    await expectError(await server.api(`/api/sessions/${s.id}`), 404, "NOT_FOUND");
    expect(() => process.kill(pid, 0)).toThrow();
  });

  it("escalates to SIGKILL for a program that ignores SIGHUP", async () => {
    const s = await server.createSession({ command: [...TEST_SHELL_COMMAND, "-c", "trap '' HUP; echo armed; while :; do sleep 1; done"] });
    await waitFor(async () => (await bufferText(s.id)).includes("armed"));
    const started = Date.now();
    const del = await server.api(`/api/sessions/${s.id}`, { method: "DELETE" });
    expect(del.status).toBe(204);
    expect(Date.now() - started).toBeLessThan(6000);
    expect(() => process.kill(s.pid!, 0)).toThrow();
  });

  it("answers bad input with clear 400/404/413 errors", async () => {
    const post = (body: string, headers: Record<string, string> = {}) =>
      server.api("/api/sessions", { method: "POST", body, headers: { "content-type": "application/json", ...headers } });
    await expectError(await post("{not json"), 400, "INVALID_REQUEST");
    await expectError(await post("[1,2]"), 400, "INVALID_REQUEST");
    await expectError(await post(JSON.stringify({ command: "bash" })), 400, "INVALID_REQUEST");
    await expectError(await post(JSON.stringify({ command: [1] })), 400, "INVALID_REQUEST");
    await expectError(await post(JSON.stringify({ cols: "80" })), 400, "INVALID_REQUEST");
    await expectError(await post(JSON.stringify({ cols: 0 })), 400, "INVALID_REQUEST");
    await expectError(await post(JSON.stringify({ rows: 1.5 })), 400, "INVALID_REQUEST");
    await expectError(await post(JSON.stringify({ env: { A: 1 } })), 400, "INVALID_REQUEST");
    await expectError(await post(JSON.stringify({ env: { "A=B": "x" } })), 400, "INVALID_REQUEST");
    await expectError(await post(JSON.stringify({ cwd: "relative/dir" })), 400, "INVALID_REQUEST");
    await expectError(await post(JSON.stringify({ cwd: "/no/such/dir/anywhere" })), 400, "INVALID_REQUEST");
    await expectError(await post(JSON.stringify({ title: 7 })), 400, "INVALID_REQUEST");
    // A misspelt field is refused by name instead of silently starting a login shell.
    const sessionsBefore = server.registry.list().length;
    const typo = await post(JSON.stringify({ comand: ["sleep", "100"] }));
    expect(typo.status).toBe(400);
    expect(((await typo.json()) as { error: { message: string } }).error.message).toContain('"comand"');
    expect(server.registry.list()).toHaveLength(sessionsBefore);
    await expectError(await post("x".repeat(2 * 1024 * 1024)), 413, "PAYLOAD_TOO_LARGE");
    await expectError(await server.api("/api/sessions/zzzzzzzz"), 404, "NOT_FOUND");
    await expectError(await server.api("/api/sessions/zzzzzzzz/buffer"), 404, "NOT_FOUND");
    await expectError(await server.api("/api/sessions/zzzzzzzz/restart", { method: "POST" }), 404, "NOT_FOUND");
    await expectError(await server.api("/api/sessions/zzzzzzzz", { method: "DELETE" }), 404, "NOT_FOUND");
    await expectError(await server.api("/api/sessions/zzzzzzzz", { method: "PATCH", json: { title: "x" } }), 404, "NOT_FOUND");
    await expectError(await server.api("/api/nothing-here"), 404, "NOT_FOUND");
    await expectError(await server.api("/api/sessions/%E0%A4%A"), 404, "NOT_FOUND");
    const s = await server.createSession({ command: ["sleep", "100"] });
    await expectError(await server.api(`/api/sessions/${s.id}`, { method: "PATCH", json: {} }), 400, "INVALID_REQUEST");
    await expectError(await server.api(`/api/sessions/${s.id}`, { method: "PATCH", json: { title: ["x"] } }), 400, "INVALID_REQUEST");
    await expectError(await server.api(`/api/sessions/${s.id}`, { method: "PATCH", body: "{" }), 400, "INVALID_REQUEST");
    await expectError(await server.api(`/api/sessions/${s.id}`, { method: "PATCH", json: { title: "x", colour: "red" } }), 400, "INVALID_REQUEST");
    expect((await info(s.id)).title).toBe("sleep 100"); // a refused rename changed nothing
    // The server still serves after all of that.
    expect((await server.api("/api/sessions")).status).toBe(200);
  });

  it("keeps settings, validates them, and persists them in the data dir", async () => {
    const get = await server.api("/api/settings");
    expect(await get.json()).toEqual({ open_api: { enabled: false } });
    const put = await server.api("/api/settings", { method: "PUT", json: { open_api: { enabled: true } } });
    expect(put.status).toBe(200);
    expect(await put.json()).toEqual({ open_api: { enabled: true } });
    await expectError(await server.api("/api/settings", { method: "PUT", json: { open_api: { enabled: "yes" } } }), 400, "INVALID_REQUEST");
    await expectError(await server.api("/api/settings", { method: "PUT", json: { colour: "red" } }), 400, "INVALID_REQUEST");
    const { readFileSync } = await import("node:fs");
    expect(JSON.parse(readFileSync(`${server.dataDir}/settings.json`, "utf8"))).toEqual({ open_api: { enabled: true } });
    await server.api("/api/settings", { method: "PUT", json: { open_api: { enabled: false } } });
  });
});
