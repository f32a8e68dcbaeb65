/**
 * An Agent API run across a restart of the server (docs/design.md, What survives a restart): real
 * `webmux serve` processes and a real bash with shell integration in the real session host. The
 * run in flight gets an error when its server is killed; its command keeps running, and a run on
 * the new server waits for it (the host followed the shell's marks) and then runs on its own.
 */
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AgentRunResult, SessionInfo } from "../contract/types.ts";
import { waitFor } from "../testing/wait.ts";
import { endDataDirs, listeningUrl, runWebmux, serverApi } from "../testing/webmux-process.ts";
import { INTEGRATION_GRACE_MS } from "./command-tracker.ts";

const TOKEN = "run-restart-token-0123456789";
/**
 * How long the new server is watched for typing into the running command too early: past the
 * integration grace, after which a tracker that knew nothing of the command would fall back to
 * prompt detection and type at the command's `%`.
 */
const WATCH_MS = INTEGRATION_GRACE_MS + 2_000;
/** How often the watch looks at the session's output. */
const WATCH_POLL_MS = 200;

const dirs: string[] = [];

afterEach(() => endDataDirs(dirs));

async function serve(dir: string): Promise<{ url: string; kill: () => Promise<unknown> }> {
  const run = runWebmux(["serve", "--port", "0", "--data-dir", dir, "--token", TOKEN, "--no-qr", "--open-api"], { isolated: true });
  const url = await listeningUrl(run);
  return {
    url,
    kill: () => {
      run.proc.kill("SIGKILL");
      return run.exit;
    },
  };
}

const { api } = serverApi(TOKEN);

function post(url: string, path: string, json: unknown): Promise<Response> {
  return api(url, path, { method: "POST", json });
}

async function buffer(url: string, id: string): Promise<string> {
  const res = await api(url, `/api/sessions/${id}/buffer`);
  return Buffer.from(await res.arrayBuffer()).toString("utf8");
}

describe("Agent API runs across a server restart", () => {
  it("kill -9 during a run: the run gets an error, its command runs on, and the new server's next run waits for it, then runs alone", async () => {
    const dir = mkdtempSync(join(tmpdir(), "webmux-run-restart-"));
    dirs.push(dir);
    const trigger = join(dir, "go-on");
    const first = await serve(dir);
    const created = await post(first.url, "/api/sessions", { command: ["bash"], env: { HOME: dir }, cwd: dir });
    expect(created.status).toBe(201);
    const s = (await created.json()) as SessionInfo;
    // Until the shell is at its prompt (a first run waits for it).
    expect((await post(first.url, "/api/agent/run", { pane_id: s.id, command: "true" })).status).toBe(200);

    // A long command that shows a progress line ending in `%`, which looks like a prompt.
    const long = `printf 'progress 50%%'; while [ ! -e ${trigger} ]; do sleep 0.05; done; echo; echo FIRST-DONE`;
    const inFlight = post(first.url, "/api/agent/run", { pane_id: s.id, command: long, timeout: 120_000 });
    // Held from the start: the request fails while the kill is still being awaited, and a
    // rejection nobody holds yet is an unhandled one.
    const inFlightOutcome = inFlight.then(
      (res) => ({ answered: res.status }),
      (error: unknown) => ({ failed: error }),
    );
    await waitFor(async () => (await buffer(first.url, s.id)).includes("progress 50%"), { message: "the long command under way" });
    await first.kill();
    expect(await inFlightOutcome).toMatchObject({ failed: expect.any(Error) });

    const second = await serve(dir);
    const next = post(second.url, "/api/agent/run", { pane_id: s.id, command: "echo SECOND", timeout: 120_000 });
    let settled = false;
    void next.then(() => (settled = true), () => (settled = true));
    // Nothing typed into the running command, and no answer while it runs, for the whole watch.
    for (const watchUntil = Date.now() + WATCH_MS; Date.now() < watchUntil; await new Promise((r) => setTimeout(r, WATCH_POLL_MS))) {
      expect((await buffer(second.url, s.id)).includes("echo SECOND")).toBe(false);
      expect(settled).toBe(false);
    }
    expect(existsSync(trigger)).toBe(false);

    writeFileSync(trigger, "");
    const res = await next;
    expect(res.status).toBe(200);
    const result = (await res.json()) as AgentRunResult;
    expect(result).toMatchObject({ exit_code: 0, stdout: "SECOND\n", pane_id: s.id, method: "shell_integration" });
    const all = await buffer(second.url, s.id);
    expect(all.indexOf("echo SECOND")).toBeGreaterThan(all.indexOf("FIRST-DONE"));
  }, 90_000);
});
