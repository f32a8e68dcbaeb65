import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../testing/test-server.ts";
import { run } from "./agent-testing.ts";

const servers: TestServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
});

async function server(shell: string): Promise<TestServer> {
  const s = await startTestServer({ shell, openApi: true });
  servers.push(s);
  return s;
}

/** A HOME with the given startup files; returns its path and a snapshot of its contents. */
function home(files: Record<string, string>): { dir: string; snapshot: () => Record<string, string> } {
  const dir = mkdtempSync(join(tmpdir(), "webmux-home-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const snapshot = () => Object.fromEntries(readdirSync(dir).map((n) => [n, readFileSync(join(dir, n), "utf8")]));
  return { dir, snapshot };
}

describe("shell integration", () => {
  it("gives the default login bash integration while it reads the login files the user has (and changes none)", async () => {
    const s = await server("/bin/bash");
    const h = home({ ".bash_profile": "export FROM_PROFILE=profile\n", ".bashrc": "FROM_BASHRC=bashrc\n" });
    const before = h.snapshot();
    const pane = (await s.createSession({ env: { HOME: h.dir }, cwd: h.dir })).id; // no command: the login shell
    const r = await run(s, { pane_id: pane, command: 'echo "$FROM_PROFILE ${FROM_BASHRC-none} ${WEBMUX_SHELL_NONCE-no-nonce}"; env | grep -c WEBMUX_SHELL || true' });
    expect(r.body).toMatchObject({ method: "shell_integration", exit_code: 0, stdout: "profile none no-nonce\n0\n" });
    expect(h.snapshot()).toEqual(before);
    expect(s.registry.get(pane)!.info().command).toEqual(["/bin/bash", "-l"]);
  });

  it("reads ~/.bashrc for a non-login bash", async () => {
    const s = await server("/bin/bash");
    const h = home({ ".bashrc": "FROM_BASHRC=bashrc\nalias hello='echo hello from alias'\n" });
    const pane = (await s.createSession({ command: ["bash"], env: { HOME: h.dir } })).id;
    expect((await run(s, { pane_id: pane, command: 'echo "$FROM_BASHRC"; hello' })).body).toMatchObject({
      method: "shell_integration",
      stdout: "bashrc\nhello from alias\n",
    });
  });

  it("gives a login zsh integration through ZDOTDIR while reading the user's files from the user's ZDOTDIR, then handing it back", async () => {
    const s = await server("/usr/bin/zsh");
    const h = home({});
    const userDir = mkdtempSync(join(tmpdir(), "webmux-zdotdir-"));
    writeFileSync(join(userDir, ".zshenv"), "FROM_ZSHENV=zshenv\n");
    writeFileSync(join(userDir, ".zshrc"), "FROM_ZSHRC=zshrc\nPROMPT='mine> '\n");
    writeFileSync(join(userDir, ".zlogin"), "FROM_ZLOGIN=zlogin\n");
    const pane = (await s.createSession({ env: { HOME: h.dir, ZDOTDIR: userDir } })).id;
    const r = await run(s, { pane_id: pane, command: 'echo "$FROM_ZSHENV $FROM_ZSHRC $FROM_ZLOGIN ${WEBMUX_SHELL_NONCE-no-nonce}"; echo "$ZDOTDIR"; false' });
    expect(r.body).toMatchObject({ method: "shell_integration", exit_code: 1, stdout: `zshenv zshrc zlogin no-nonce\n${userDir}\n` });
    const screen = await s.registry.get(pane)!.readScreen();
    expect(screen.lines.some((l) => l.startsWith("mine> "))).toBe(true);
  });

  it("integrates again after the session is restarted", async () => {
    const s = await server("/bin/bash");
    const h = home({});
    const pane = (await s.createSession({ command: ["bash"], env: { HOME: h.dir } })).id;
    expect((await run(s, { pane_id: pane, command: "(exit 3)" })).body).toMatchObject({ method: "shell_integration", exit_code: 3 });
    expect((await s.api(`/api/sessions/${pane}/restart`, { method: "POST" })).status).toBe(200);
    expect((await run(s, { pane_id: pane, command: "(exit 4)" })).body).toMatchObject({ method: "shell_integration", exit_code: 4 });
  });

  it("starts any other command exactly as given, driven by prompt detection", async () => {
    const s = await server("/bin/bash");
    const pane = (await s.createSession({ command: ["bash", "--norc", "--noprofile"] })).id;
    expect((await run(s, { pane_id: pane, command: "echo plain" })).body).toMatchObject({ method: "prompt_detection", stdout: "plain\n" });
  });
});
