import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionInfo } from "../contract/types.ts";
import type { TestServer } from "../testing/test-server.ts";
import { waitFor } from "../testing/wait.ts";
import { run, startAgentServer } from "./agent-testing.ts";
import { INTEGRATION_GRACE_MS } from "./command-tracker.ts";

/** Each case waits for a shell that takes longer than the grace to start; a busy machine adds to it. */
const CASE_TIMEOUT_MS = 90_000;
/** The runs' own timeout: longer than any of these shells takes to show its prompt. */
const RUN_TIMEOUT_MS = 30_000;

let server: TestServer;
const homes: string[] = [];
beforeAll(async () => {
  server = await startAgentServer();
});
afterAll(async () => {
  await server?.stop();
  for (const home of homes) rmSync(home, { recursive: true, force: true });
});

/** A bash (started with webmux's integration) whose HOME holds this ~/.bashrc. */
async function bashWithRc(bashrc: string): Promise<{ session: SessionInfo; home: string }> {
  const home = mkdtempSync(join(tmpdir(), "webmux-slowrc-"));
  homes.push(home);
  writeFileSync(join(home, ".bashrc"), bashrc);
  const session = await server.createSession({ command: ["bash"], env: { HOME: home }, cwd: home });
  return { session, home };
}

describe.concurrent("a run sent while the shell is still starting", () => {
  it("waits for a ~/.bashrc that sleeps 12 s before the first prompt, and answers the real exit code and stdout", async () => {
    const { session } = await bashWithRc("sleep 12\n");
    const r = await run(server, { pane_id: session.id, command: "echo slow-$((6*7)); (exit 3)", timeout: RUN_TIMEOUT_MS });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ exit_code: 3, stdout: "slow-42\n", method: "shell_integration" });
  }, CASE_TIMEOUT_MS);

  it("waits too when it arrives after the grace is over (many shells starting at once), typing nothing before the prompt", async () => {
    // the rc finishes only when told, so the run surely arrives while the shell has shown nothing
    const { session, home } = await bashWithRc('while [ ! -e "$HOME/go" ]; do sleep 0.05; done\n');
    await waitFor(() => server.agent.trackerOf(session.id)?.unconfirmed, { timeout: INTEGRATION_GRACE_MS * 3, message: "the grace over" });
    const answer = run(server, { pane_id: session.id, command: "echo late >> runs; cat runs; (exit 5)", timeout: RUN_TIMEOUT_MS });
    await waitFor(() => server.agent.pendingRuns(session.id) === 1, { message: "the run queued" });
    expect(server.registry.get(session.id)!.stats().end).toBe(0); // nothing typed, nothing echoed
    writeFileSync(join(home, "go"), "");
    const r = await answer;
    expect(r.body).toMatchObject({ exit_code: 5, stdout: "late\n", method: "shell_integration" });
  }, CASE_TIMEOUT_MS);

  it("falls back to prompt detection once a shell whose ~/.bashrc execs one without integration shows its prompt", async () => {
    const { session } = await bashWithRc("PS1='plain$ ' exec bash --norc --noprofile -i\n");
    const r = await run(server, { pane_id: session.id, command: "echo detected", timeout: RUN_TIMEOUT_MS });
    expect(r.body).toMatchObject({ exit_code: null, stdout: "detected\n", method: "prompt_detection" });
  }, CASE_TIMEOUT_MS);
});
