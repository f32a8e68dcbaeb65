import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentReadResponse } from "../contract/types.ts";
import { TerminalClient } from "../testing/terminal-client.ts";
import type { TestServer } from "../testing/test-server.ts";
import { waitFor } from "../testing/wait.ts";
import { atPrompt, get, run, shellSession, startAgentServer, type Shell } from "./agent-testing.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startAgentServer();
});
afterAll(async () => {
  await server?.stop();
});

describe.each<Shell>(["bash", "zsh"])("POST /api/agent/run on %s with shell integration", (shell) => {
  let pane: string;
  beforeAll(async () => {
    pane = (await shellSession(server, shell)).id;
  });

  it("returns the real exit status", async () => {
    const ok = await run(server, { pane_id: pane, command: "true" });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ exit_code: 0, stdout: "", stderr: "", pane_id: pane, method: "shell_integration" });
    expect((await run(server, { pane_id: pane, command: "false" })).body.exit_code).toBe(1);
    expect((await run(server, { pane_id: pane, command: "(exit 7)" })).body.exit_code).toBe(7);
    expect((await run(server, { pane_id: pane, command: "sh -c 'exit 42'" })).body.exit_code).toBe(42);
  });

  it("returns exactly the command's output", async () => {
    const r = await run(server, { pane_id: pane, command: "printf 'a\\nb\\n'" });
    expect(r.body).toMatchObject({ exit_code: 0, stdout: "a\nb\n" });
    expect(typeof r.body.duration).toBe("number");
    // no trailing newline: the shell's own prompt padding is not part of it
    expect((await run(server, { pane_id: pane, command: "printf abc" })).body.stdout).toBe("abc");
  });

  it("turns colours and a carriage-return progress bar into clean text", async () => {
    const command = "printf '\\033[1;32mgreen\\033[0m\\n'; for p in 10 50 100; do printf '\\rprogress %3d%%' $p; done; printf '\\rdone\\033[K\\n'";
    expect((await run(server, { pane_id: pane, command })).body.stdout).toBe("green\ndone\n");
    const raw = await run(server, { pane_id: pane, command: "printf '\\033[31mred\\033[0m\\n'", strip_ansi: false });
    expect(raw.body.stdout).toBe("\x1b[31mred\x1b[0m\n");
  });

  it("runs in the given cwd with the given env, and neither leaks into the shell afterwards", async () => {
    const r = await run(server, { pane_id: pane, command: 'pwd; printf "%s\\n" "$GREETING"', cwd: "/tmp", env: { GREETING: "it's a \"test\" $HOME" } });
    expect(r.body).toMatchObject({ exit_code: 0, stdout: "/tmp\nit's a \"test\" $HOME\n" });
    const after = await run(server, { pane_id: pane, command: 'pwd; echo "${GREETING-unset}"' });
    expect(after.body.stdout).not.toContain("/tmp\n");
    expect(after.body.stdout.endsWith("unset\n")).toBe(true);
  });

  it("runs text a shell would mangle when typed (history expansion, several lines, an incomplete command) as one command", async () => {
    expect((await run(server, { pane_id: pane, command: 'echo "wow!bang"' })).body.stdout).toBe("wow!bang\n");
    expect((await run(server, { pane_id: pane, command: "echo one\necho two\nfalse" })).body).toMatchObject({ stdout: "one\ntwo\n", exit_code: 1 });
    const broken = await run(server, { pane_id: pane, command: "if then", timeout: 10_000 });
    expect(broken.body.method).toBe("shell_integration");
    expect(broken.body.exit_code).not.toBe(0);
  });

  it("times out with method timeout and the output so far; the next run waits for that command", async () => {
    const slow = await run(server, { pane_id: pane, command: "echo started; sleep 2; echo finished", timeout: 1000 });
    expect(slow.status).toBe(200);
    expect(slow.body).toMatchObject({ exit_code: null, method: "timeout", stdout: "started\n" });
    // The slot came back with the timeout, while the command is still running.
    expect(server.agent.trackerOf(pane)?.running).toBe(true);
    expect(server.agent.slots.used("global")).toBe(0);
    const started = Date.now();
    const next = await run(server, { pane_id: pane, command: "echo next" });
    expect(next.body).toMatchObject({ exit_code: 0, stdout: "next\n" });
    expect(Date.now() - started).toBeGreaterThan(500); // it waited for the sleep to end, never typing into it
  });

  it("runs two requests on one session one after the other, in order", async () => {
    const stamp = `/tmp/webmux-order-${shell}-${process.pid}`;
    const [first, second] = await Promise.all([
      run(server, { pane_id: pane, command: `echo first > ${stamp}; sleep 0.3; echo first-done` }),
      run(server, { pane_id: pane, command: `cat ${stamp}; rm -f ${stamp}` }),
    ]);
    expect(first.body.stdout).toBe("first-done\n");
    expect(second.body.stdout).toBe("first\n"); // the second only started after the first had finished
  });

  it("never types into a command a person started: the run waits until it has finished", async () => {
    await atPrompt(server, pane);
    const person = await TerminalClient.connect(server.url, pane, { token: server.token, client: `person-${shell}` });
    person.type('read -r answer; echo "person got $answer"\r');
    await waitFor(() => server.agent.trackerOf(pane)?.running, { message: "the person's read running" });
    const pending = run(server, { pane_id: pane, command: "echo agent-run" });
    await waitFor(() => server.agent.pendingRuns(pane) === 1, { message: "the run queued" });
    person.type("yes\r"); // had the run typed into `read`, its line would be the answer and this a command
    const r = await pending;
    expect(r.body).toMatchObject({ exit_code: 0, stdout: "agent-run\n", method: "shell_integration" });
    const screen = await get<AgentReadResponse>(server, `/api/agent/read?pane_id=${pane}&scrollback=200`);
    expect([...screen.body.scrollback!, ...screen.body.lines]).toContain("person got yes");
    await person.close();
  });

  it("reports the shell's directory (OSC 7) to read, also one that needs percent-encoding", async () => {
    const dir = mkdtempSync(join(tmpdir(), "webmux cwd ü-"));
    expect((await run(server, { pane_id: pane, command: `cd '${dir}'` })).body.exit_code).toBe(0);
    await waitFor(async () => (await get<AgentReadResponse>(server, `/api/agent/read?pane_id=${pane}`)).body.cwd === dir, { message: `cwd ${dir}` });
    expect((await run(server, { pane_id: pane, command: "cd - >/dev/null" })).body.exit_code).toBe(0);
  });

  it("is not ended early by a program printing a fake OSC 133;D", async () => {
    const fake = "printf 'before\\n\\033]133;D;0\\007\\033]133;D;0;webmux=0123abcd\\007\\033]133;A\\007'";
    const r = await run(server, { pane_id: pane, command: `${fake}; sleep 0.3; echo after; (exit 3)` });
    expect(r.body).toMatchObject({ method: "shell_integration", exit_code: 3, stdout: "before\nafter\n" });
  });
});

describe("POST /api/agent/run on a shell without integration", () => {
  it("falls back to prompt detection for sh", async () => {
    const pane = (await shellSession(server, "sh")).id;
    const r = await run(server, { pane_id: pane, command: "printf 'a\\nb\\n'" });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ method: "prompt_detection", stdout: "a\nb\n", exit_code: null, pane_id: pane });
    const cwd = await run(server, { pane_id: pane, command: "pwd; echo $V", cwd: "/tmp", env: { V: "x y" } });
    expect(cwd.body.stdout).toBe("/tmp\nx y\n");
  });
});
