/**
 * The last line of defence of `webmux serve` (docs/design.md, Hardening and limits): after an
 * exception or rejection nothing caught, the real server process logs it with its stack, ends
 * every session's program (SIGHUP first, SIGKILL for one that ignores it) and exits non-zero.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { SessionInfo } from "../contract/types.ts";
import { waitFor } from "../testing/wait.ts";
import { listeningUrl, runWebmux, stopWebmuxProcesses } from "../testing/webmux-process.ts";
import { CRASH_EXIT_CODE } from "./serve.ts";
import { processAlive } from "../testing/process-alive.ts";

const TOKEN = "crash-test-token-0123456789";
const CRASH_PRELOAD = join(import.meta.dirname, "..", "testing", "crash-on-signal.mjs");
const dirs: string[] = [];

afterEach(() => {
  stopWebmuxProcesses();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe.each(["exception", "rejection"])("an uncaught %s in webmux serve", (kind) => {
  it("is logged with its stack, ends every session (SIGHUP, then SIGKILL) and exits non-zero", async () => {
    const dir = mkdtempSync(join(tmpdir(), "webmux-crash-"));
    dirs.push(dir);
    const run = runWebmux(["serve", "--stop-sessions-on-exit", "--port", "0", "--data-dir", join(dir, "data"), "--token", TOKEN, "--no-qr"], {
      runtime: [process.execPath, "--import", CRASH_PRELOAD, "bin/webmux.js"],
      env: { CRASH_KIND: kind },
    });
    const url = await listeningUrl(run);
    const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
    const start = async (script: string): Promise<SessionInfo> => {
      const res = await fetch(`${url}/api/sessions`, { method: "POST", headers, body: JSON.stringify({ command: ["bash", "-c", script] }) });
      expect(res.status).toBe(201);
      const info = (await res.json()) as SessionInfo;
      // Its trap is set once it printed "ready".
      await waitFor(async () => (await (await fetch(`${url}/api/sessions/${info.id}/buffer`, { headers })).text()).includes("ready"), { message: "ready" });
      return info;
    };
    const hupLog = join(dir, "hup");
    const hearsHup = await start(`trap 'echo hup >> ${hupLog}' HUP; echo ready; while :; do sleep 0.1; done`);
    const ignoresHup = await start("trap '' HUP; echo ready; while :; do sleep 0.1; done");
    run.proc.kill("SIGUSR2");
    expect(await run.exit).toBe(CRASH_EXIT_CODE);
    const message = kind === "exception" ? "an exception nothing catches" : "a rejection nothing handles";
    expect(run.err()).toMatch(new RegExp(`webmux: ${kind === "exception" ? "uncaught exception" : "unhandled rejection"}: Error: ${message}\\n\\s+at `));
    // The first got SIGHUP (and, going on regardless, SIGKILL); the second only the SIGKILL can end.
    expect(existsSync(hupLog) && readFileSync(hupLog, "utf8")).toContain("hup");
    await waitFor(() => !processAlive(hearsHup.pid!) && !processAlive(ignoresHup.pid!), { message: "both programs ended" });
  });
});
