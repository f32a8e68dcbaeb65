import { execFile } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionInfo, TokenInfo } from "../contract/types.ts";
import { startTestServer, TEST_SHELL_COMMAND, type TestServer } from "../testing/test-server.ts";
import { waitFor } from "../testing/wait.ts";
import { formatSessionTable } from "./session-commands.ts";

const WEBMUX_BIN = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "bin", "webmux.js");

type CliResult = { code: number; stdout: string; stderr: string };

/** Run `webmux …` as a user would from a script (no terminal), with only the given WEBMUX_* variables. */
function runCli(args: string[], env: Record<string, string>): Promise<CliResult> {
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("WEBMUX_") && k !== "XDG_STATE_HOME") base[k] = v;
  return new Promise((resolve) => {
    execFile(process.execPath, [WEBMUX_BIN, ...args], { env: { ...base, ...env } }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** A port nothing listens on: bound once, then released. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const port = (probe.address() as { port: number }).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

let server: TestServer;
let env: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer();
  env = { WEBMUX_URL: server.url, WEBMUX_TOKEN: server.token };
});
afterAll(async () => {
  await server.stop();
});

describe("webmux ls / new / kill", () => {
  it("new prints the id of a session that runs the command, with the title and cwd asked for", async () => {
    const dir = join(tmpdir(), `webmux-cli-${process.pid}`);
    mkdirSync(dir, { recursive: true });
    try {
      const created = await runCli(["new", "--title", "build box", "--cwd", dir, "--", ...TEST_SHELL_COMMAND], env);
      expect(created.code, created.stderr).toBe(0);
      const id = created.stdout.trim();
      expect(id).toMatch(/^[a-z0-9]{8}$/);
      const session = server.registry.get(id)!;
      expect(session.info().title).toBe("build box");
      expect(session.info().command).toEqual(TEST_SHELL_COMMAND);
      const listed = await server.api(`/api/sessions/${id}`).then((r) => r.json() as Promise<SessionInfo>);
      expect(listed.status).toBe("running");
      // the session really starts in that directory
      session.write("pwd\r");
      await waitFor(() => Buffer.from(session.readOutput()).toString().includes(`${dir}\r\n`), { message: "pwd output" });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("ls --json is a JSON array of SessionInfo, and ls shows a table with the same sessions", async () => {
    const a = await server.createSession({ command: TEST_SHELL_COMMAND, title: "alpha" });
    const b = await server.createSession({ command: ["sh", "-c", "exit 4"], title: "beta" });
    await waitFor(() => server.registry.get(b.id)?.status === "exited", { message: "beta exits" });
    const json = await runCli(["ls", "--json"], env);
    expect(json.code, json.stderr).toBe(0);
    const sessions = JSON.parse(json.stdout) as SessionInfo[];
    expect(Array.isArray(sessions)).toBe(true);
    const byId = new Map(sessions.map((s) => [s.id, s]));
    expect(byId.get(a.id)?.title).toBe("alpha");
    expect(byId.get(b.id)).toMatchObject({ status: "exited", exitCode: 4 });

    const table = await runCli(["ls"], env);
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^ID\s+STATUS\s+CLIENTS\s+SIZE\s+AGE\s+TITLE$/);
    expect(lines.find((l) => l.startsWith(a.id))).toMatch(/running .*alpha$/);
    expect(lines.find((l) => l.startsWith(b.id))).toMatch(/exited\(4\) .*beta$/);
  });

  it("kill removes the session; a second kill says the id is unknown", async () => {
    const s = await server.createSession();
    const killed = await runCli(["kill", s.id], env);
    expect(killed.code, killed.stderr).toBe(0);
    expect(server.registry.get(s.id)).toBeUndefined();
    const again = await runCli(["kill", s.id], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`no session ${s.id}`);
  });

  it("an empty list says how to start a session", () => {
    expect(formatSessionTable([], Date.now())).toMatch(/no sessions .*webmux new/);
  });
});

describe("clear errors", () => {
  it("says the server is not running, naming the URL", async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const result = await runCli(["ls"], { WEBMUX_URL: url, WEBMUX_TOKEN: "whatever-token-123456" });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`cannot reach the webmux server at ${url}`);
    expect(result.stderr).toContain("webmux serve");
  });

  it("says the token was refused on 401", async () => {
    const result = await runCli(["ls"], { WEBMUX_URL: server.url, WEBMUX_TOKEN: "wrong-token-0123456789" });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/refused the token \(401\)/);
  });

  it("says the id is unknown before attaching", async () => {
    const result = await runCli(["attach", "zzzzzzzz"], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("no session zzzzzzzz");
  });

  it("finds the token in the data dir when none is given, and --url/--token flags win over the environment", async () => {
    const dataDir = join(tmpdir(), `webmux-cli-data-${process.pid}`);
    mkdirSync(dataDir, { recursive: true });
    try {
      writeFileSync(join(dataDir, "global-token.json"), JSON.stringify({ token: server.token, created_at: Date.now() }));
      const fromDir = await runCli(["ls", "--json"], { WEBMUX_URL: server.url, WEBMUX_DATA_DIR: dataDir });
      expect(fromDir.code, fromDir.stderr).toBe(0);
      const fromFlag = await runCli(["ls", "--json", "--data-dir", dataDir], { WEBMUX_URL: server.url });
      expect(fromFlag.code, fromFlag.stderr).toBe(0);
      // no flag, no variable: the data dir a local `webmux serve` uses by default, $XDG_STATE_HOME/webmux
      const stateHome = join(dataDir, "state");
      mkdirSync(join(stateHome, "webmux"), { recursive: true });
      writeFileSync(join(stateHome, "webmux", "global-token.json"), JSON.stringify({ token: server.token, created_at: Date.now() }));
      const fromDefault = await runCli(["ls", "--json"], { WEBMUX_URL: server.url, XDG_STATE_HOME: stateHome });
      expect(fromDefault.code, fromDefault.stderr).toBe(0);
      expect(Array.isArray(JSON.parse(fromDefault.stdout))).toBe(true);
      const flags = await runCli(["ls", "--json", "--url", server.url, "--token", server.token], { WEBMUX_URL: "http://127.0.0.1:1", WEBMUX_TOKEN: "bad-token-0123456789" });
      expect(flags.code, flags.stderr).toBe(0);
      const none = await runCli(["ls"], { WEBMUX_URL: server.url, WEBMUX_DATA_DIR: join(dataDir, "empty") });
      expect(none.code).toBe(1);
      expect(none.stderr).toMatch(/no token: pass --token, set WEBMUX_TOKEN/);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("refuses unknown commands and options with status 2", async () => {
    expect((await runCli(["lss"], env)).code).toBe(2);
    const bad = await runCli(["ls", "--jsn"], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("unknown option --jsn");
  });
});

describe("webmux token", () => {
  it("creates a token that works, lists it without its secret, and revokes it", async () => {
    const created = await runCli(["token", "create", "--name", "monitor", "--capabilities", "terminal:read", "--expires-in", "3600"], env);
    expect(created.code, created.stderr).toBe(0);
    const secret = created.stdout.trim();
    expect(secret).toMatch(/^dnt_[0-9a-f]{64}$/);
    // Agent tokens work only while the Agent API is on.
    expect((await server.api("/api/settings", { method: "PUT", json: { open_api: { enabled: true } } })).status).toBe(200);
    // the new token reads sessions
    const asAgent = await runCli(["ls", "--json"], { WEBMUX_URL: server.url, WEBMUX_TOKEN: secret });
    expect(asAgent.code, asAgent.stderr).toBe(0);

    const listed = await runCli(["token", "list", "--json"], env);
    expect(listed.code, listed.stderr).toBe(0);
    const tokens = JSON.parse(listed.stdout) as TokenInfo[];
    const mine = tokens.find((t) => t.name === "monitor")!;
    expect(mine.capabilities).toEqual(["terminal:read"]);
    expect(mine.expires_at).not.toBeNull();
    expect(listed.stdout).not.toContain(secret);
    const table = await runCli(["token", "list"], env);
    expect(table.stdout).toMatch(new RegExp(`${mine.id}\\s+monitor\\s+terminal:read\\s+`));

    const revoked = await runCli(["token", "revoke", mine.id], env);
    expect(revoked.code, revoked.stderr).toBe(0);
    const after = await runCli(["ls"], { WEBMUX_URL: server.url, WEBMUX_TOKEN: secret });
    expect(after.code).toBe(1);
    expect(after.stderr).toMatch(/401/);
    const twice = await runCli(["token", "revoke", mine.id], env);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain(`no token ${mine.id}`);
  });

  it("checks the arguments before asking the server", async () => {
    const noName = await runCli(["token", "create"], env);
    expect(noName.code).toBe(2);
    expect(noName.stderr).toContain("--name is required");
    const badCap = await runCli(["token", "create", "--name", "x", "--capabilities", "terminal:admin"], env);
    expect(badCap.code).toBe(2);
    expect(badCap.stderr).toContain('unknown capability "terminal:admin"');
  });
});
