import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { waitFor } from "../testing/wait.ts";
import { listeningUrl, runWebmux, stopWebmuxProcesses, type WebmuxRun } from "../testing/webmux-process.ts";

const dirs: string[] = [];
afterEach(() => {
  stopWebmuxProcesses();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "webmux-serve-"));
  dirs.push(dir);
  return dir;
}

const webmux = (args: string[], env: Record<string, string> = {}): WebmuxRun => runWebmux(args, { env });
const listening = (run: WebmuxRun) => listeningUrl(run, /^listening on (http:\/\/127\.0\.0\.1:\d+)$/m);

describe("webmux serve", () => {
  it("prints exactly one listening line with the real port, where the token is (stderr is no terminal), and keeps a generated token", async () => {
    const dataDir = tempDir();
    const run = webmux(["serve", "--port", "0", "--data-dir", dataDir]);
    const url = await listening(run);
    expect(run.out().trim().split("\n")).toEqual([`listening on ${url}`]);
    expect(url).not.toMatch(/:0$/);
    const stored = JSON.parse(readFileSync(join(dataDir, "global-token.json"), "utf8")) as { token: string };
    // stderr is a pipe here, not a terminal: it says where the token is, never the token itself.
    await waitFor(() => run.err().includes("to log in\n"), { message: "login line on stderr" });
    expect(run.err()).toContain(`webmux: open ${url}/ and paste the token kept in ${join(dataDir, "global-token.json")} to log in`);
    expect(run.err()).not.toContain(stored.token);
    const res = await fetch(`${url}/api/sessions`, { headers: { authorization: `Bearer ${stored.token}` } });
    expect(res.status).toBe(200);
    run.proc.kill("SIGTERM");
    expect(await run.exit).toBe(0);
    // a second start reuses the stored token
    const again = webmux(["serve", "--port", "0", "--data-dir", dataDir]);
    const url2 = await listening(again);
    expect((await fetch(`${url2}/api/sessions`, { headers: { authorization: `Bearer ${stored.token}` } })).status).toBe(200);
    again.proc.kill("SIGINT");
    expect(await again.exit).toBe(0);
  });

  it("reads every flag from WEBMUX_* variables", async () => {
    const dataDir = tempDir();
    const run = webmux(["serve"], {
      // another loopback address than the default, so the line proves the variable was read
      WEBMUX_HOST: "127.0.0.2",
      WEBMUX_PORT: "0",
      WEBMUX_DATA_DIR: dataDir,
      WEBMUX_TOKEN: "env-token-0123456789abcdef",
      WEBMUX_SHELL: "/bin/sh",
      WEBMUX_BUFFER_BYTES: "65536",
      WEBMUX_OPEN_API: "1",
      WEBMUX_STOP_SESSIONS_ON_EXIT: "1",
    });
    const url = await listeningUrl(run, /^listening on (http:\/\/127\.0\.0\.2:\d+)$/m);
    const headers = { authorization: "Bearer env-token-0123456789abcdef" };
    const settings = await (await fetch(`${url}/api/settings`, { headers })).json();
    expect(settings).toEqual({ open_api: { enabled: true } });
    expect(JSON.parse(readFileSync(join(dataDir, "settings.json"), "utf8"))).toEqual({ open_api: { enabled: true } });
    const created = (await (await fetch(`${url}/api/sessions`, { method: "POST", headers, body: "{}" })).json()) as { command: string[] };
    expect(created.command[0]).toBe("/bin/sh");
    // 20 000 numbered lines are ~109 kB: a 64 KiB ring keeps exactly its last 65 536 bytes.
    const flood = (await (await fetch(`${url}/api/sessions`, { method: "POST", headers, body: JSON.stringify({ command: ["seq", "1", "20000"] }) })).json()) as { id: string };
    const buffer = await waitFor(async () => {
      const res = await fetch(`${url}/api/sessions/${flood.id}/buffer`, { headers });
      const text = await res.text();
      return text.endsWith("20000\r\n") ? res : null;
    }, { message: "the whole seq output" });
    expect(buffer.headers.get("x-webmux-truncated")).toBe("true");
    expect(Number(buffer.headers.get("x-webmux-end")) - Number(buffer.headers.get("x-webmux-start"))).toBe(65536);
    run.proc.kill("SIGTERM");
    expect(await run.exit).toBe(0);
  });

  it("lets a flag win over its WEBMUX_* variable", async () => {
    const run = webmux(["serve", "--stop-sessions-on-exit", "--port", "0", "--data-dir", tempDir(), "--token", "flag-token-0123456789abc"], {
      WEBMUX_PORT: "1",
      WEBMUX_TOKEN: "env-token-0123456789abcdef",
    });
    const url = await listening(run);
    expect(url).not.toMatch(/:1$/);
    expect((await fetch(`${url}/api/sessions`, { headers: { authorization: "Bearer flag-token-0123456789abc" } })).status).toBe(200);
    expect((await fetch(`${url}/api/sessions`, { headers: { authorization: "Bearer env-token-0123456789abcdef" } })).status).toBe(401);
    run.proc.kill("SIGTERM");
    expect(await run.exit).toBe(0);
  });

  it("with --stop-sessions-on-exit, ends its sessions' programs on SIGTERM and leaves valid JSON in the data dir", async () => {
    const dataDir = tempDir();
    const run = webmux(["serve", "--stop-sessions-on-exit", "--port", "0", "--data-dir", dataDir, "--token", "shutdown-token-0123456789"]);
    const url = await listening(run);
    const headers = { authorization: "Bearer shutdown-token-0123456789", "content-type": "application/json" };
    await fetch(`${url}/api/settings`, { method: "PUT", headers, body: JSON.stringify({ open_api: { enabled: true } }) });
    const pids: number[] = [];
    for (const command of [["sleep", "300"], ["bash", "--norc", "--noprofile", "-c", "trap '' HUP; sleep 300"]]) {
      const s = (await (await fetch(`${url}/api/sessions`, { method: "POST", headers, body: JSON.stringify({ command }) })).json()) as { pid: number };
      pids.push(s.pid);
    }
    run.proc.kill("SIGTERM");
    expect(await run.exit).toBe(0);
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow();
    expect(JSON.parse(readFileSync(join(dataDir, "settings.json"), "utf8"))).toEqual({ open_api: { enabled: true } });
  });

  it("says clearly when the port is in use", async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, "127.0.0.1", r));
    const port = (blocker.address() as { port: number }).port;
    try {
      const run = webmux(["serve", "--port", String(port), "--data-dir", tempDir()]);
      expect(await run.exit).toBe(1);
      expect(run.err().trim()).toBe(`webmux: port ${port} on 127.0.0.1 is already in use (choose another with --port, or --port 0 for a free one)`);
      expect(run.out()).toBe("");
    } finally {
      blocker.close();
    }
  });

  it("says clearly when the data dir cannot be used, and leaves an existing file intact", async () => {
    const parent = tempDir();
    const file = join(parent, "not-a-dir");
    writeFileSync(file, "x");
    const run = webmux(["serve", "--stop-sessions-on-exit", "--port", "0", "--data-dir", file]);
    expect(await run.exit).toBe(1);
    expect(run.err()).toMatch(/^webmux: cannot use data dir .*not-a-dir: (ENOTDIR|EEXIST)/);
    expect(readFileSync(file, "utf8")).toBe("x");
    if (process.getuid?.() !== 0) {
      // root ignores permission bits; the check above covers the root case
      const locked = join(parent, "locked");
      mkdirSync(locked);
      chmodSync(locked, 0o500);
      const run2 = webmux(["serve", "--stop-sessions-on-exit", "--port", "0", "--data-dir", locked]);
      expect(await run2.exit).toBe(1);
      expect(run2.err()).toMatch(/cannot use data dir/);
    }
    const corrupt = tempDir();
    writeFileSync(join(corrupt, "settings.json"), "{oops");
    const run3 = webmux(["serve", "--stop-sessions-on-exit", "--port", "0", "--data-dir", corrupt, "--token", "corrupt-token-0123456789"]);
    expect(await run3.exit).toBe(1);
    expect(run3.err()).toMatch(/settings\.json is not valid JSON/);
    expect(readFileSync(join(corrupt, "settings.json"), "utf8")).toBe("{oops");
  });

  it("rejects bad flags with a usage error", async () => {
    const run = webmux(["serve", "--port", "eighty"]);
    expect(await run.exit).toBe(2);
    expect(run.err()).toMatch(/--port must be a whole number/);
    const help = webmux(["serve", "--help"]);
    expect(await help.exit).toBe(0);
    expect(help.out()).toContain("--buffer-bytes");
  });
});
