/**
 * Session hosts a test left behind (docs/design.md, What survives a restart): `webmux serve` starts
 * a detached host that outlives it, so a test that starts servers must pass `--stop-sessions-on-exit`
 * or end the host (`webmux stop`) when it is done. Every process a test run starts carries
 * WEBMUX_TEST_RUN in its environment (the vitest setup and the e2e config set it; hosts inherit
 * it from their server), and the hosts of a run are found by it in /proc (Linux).
 */
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { waitFor } from "./wait.ts";
import { processAlive } from "./process-alive.ts";

/** Names the test run a process belongs to; the kit's launchers pass it on. */
export const TEST_RUN_VARIABLE = "WEBMUX_TEST_RUN";
/** A host whose server just left exits by itself within a moment; on a loaded machine, within this. */
const SELF_EXIT_GRACE_MS = 15_000;
/** A leftover host ends its sessions on SIGTERM (SIGHUP, SIGKILL after 3 s): past that it gets SIGKILL. */
const TERM_GRACE_MS = 6_000;

/** This run's marker, made when the run has none yet. */
export function testRunMarker(): string {
  return (process.env[TEST_RUN_VARIABLE] ??= `${process.pid}-${randomBytes(6).toString("hex")}`);
}

export type HostProcess = { pid: number; dataDir: string };

/** The `webmux host --data-dir D` processes that carry this run's marker (or, given, hold one of these data dirs). */
export function sessionHostProcesses(filter: { run?: string; dataDirs?: string[] }): HostProcess[] {
  const found: HostProcess[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0");
    } catch {
      continue; // ended meanwhile
    }
    const entry = argv.findIndex((a) => a.endsWith("bin/webmux.js") || a.endsWith("server/main.ts"));
    if (entry < 0 || argv[entry + 1] !== "host") continue;
    const flag = argv.indexOf("--data-dir", entry);
    const dataDir = flag < 0 ? "" : (argv[flag + 1] ?? "");
    if (filter.dataDirs && !filter.dataDirs.includes(dataDir)) continue;
    if (filter.run !== undefined) {
      let environ = "";
      try {
        environ = readFileSync(`/proc/${name}/environ`, "utf8");
      } catch {
        continue; // another user's, or gone
      }
      if (!environ.split("\0").includes(`${TEST_RUN_VARIABLE}=${filter.run}`)) continue;
    }
    found.push({ pid: Number(name), dataDir });
  }
  return found;
}

/**
 * Fails when a host of the filter is still running after the grace in which a host whose server
 * left exits by itself; such a host is ended first (SIGTERM, then SIGKILL) so it outlives no test run.
 */
export async function expectNoSessionHostLeft(filter: { run?: string; dataDirs?: string[] }, graceMs = SELF_EXIT_GRACE_MS): Promise<void> {
  if (sessionHostProcesses(filter).length === 0) return;
  const left = await waitFor(() => (sessionHostProcesses(filter).length === 0 ? true : undefined), { timeout: graceMs, interval: 100 }).then(
    () => [],
    () => sessionHostProcesses(filter),
  );
  if (left.length === 0) return;
  for (const { pid } of left) process.kill(pid, "SIGTERM");
  await waitFor(() => left.every(({ pid }) => !processAlive(pid)) || undefined, { timeout: TERM_GRACE_MS, interval: 100 }).catch(() => {
    for (const { pid } of left) if (processAlive(pid)) process.kill(pid, "SIGKILL");
  });
  const which = left.map(({ pid, dataDir }) => `pid ${pid} of ${dataDir}`).join(", ");
  throw new Error(
    `a session host outlived its test (${which}): pass --stop-sessions-on-exit to a webmux serve that is not about the host, or run webmux stop --data-dir D when done`,
  );
}
