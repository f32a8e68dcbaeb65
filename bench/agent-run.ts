/**
 * The Agent API run figure (docs/design.md § Performance):
 * the overhead of `POST /api/agent/run` for `true` — HTTP request to result,
 * through a real server process and a real bash with shell integration — p50 and p99 over
 * 200 runs, one after another on one session (runs on a session are sequential anyway).
 * Runnable alone: `node bin/run-ts.js bench/agent-run.ts`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import type { AgentRunResult, SessionInfo } from "../server/contract/types.ts";
import { startServerProcess, type ServerProcess } from "./server-process.ts";
import { quantile, round } from "./stats.ts";

/** Runs measured: 200 make the p99 a real tail, not one unlucky run. */
const RUNS = 200;
/** Unrecorded runs first (JIT, the shell's first prompts, the HTTP connection). */
const WARMUP_RUNS = 20;
/** A run of `true` slower than this means something is broken, not slow. */
const RUN_TIMEOUT_MS = 10_000;

async function runTrue(server: ServerProcess, pane: string): Promise<number> {
  const started = performance.now();
  const res = await server.api("/api/agent/run", { method: "POST", json: { command: "true", pane_id: pane, timeout: RUN_TIMEOUT_MS } });
  const result = (await res.json()) as AgentRunResult;
  const elapsed = performance.now() - started;
  if (res.status !== 200 || result.exit_code !== 0 || result.method !== "shell_integration") {
    throw new Error(`run of true answered ${res.status}: ${JSON.stringify(result)}`);
  }
  return elapsed;
}

export async function benchAgentRun(): Promise<{ p50Ms: number; p99Ms: number }> {
  const server = await startServerProcess();
  // An empty HOME: the user's own rc files would measure their shell, not webmux.
  const home = mkdtempSync(join(tmpdir(), "webmux-bench-home-"));
  try {
    const enabled = await server.api("/api/settings", { method: "PUT", json: { open_api: { enabled: true } } });
    if (enabled.status !== 200) throw new Error(`cannot enable the Agent API: ${enabled.status}`);
    const created = await server.api("/api/sessions", { method: "POST", json: { command: ["bash"], env: { HOME: home }, cwd: home } });
    if (created.status !== 201) throw new Error(`cannot create a session: ${created.status} ${await created.text()}`);
    const pane = ((await created.json()) as SessionInfo).id;
    for (let i = 0; i < WARMUP_RUNS; i++) await runTrue(server, pane);
    const samples: number[] = [];
    for (let i = 0; i < RUNS; i++) samples.push(await runTrue(server, pane));
    return { p50Ms: round(quantile(samples, 0.5), 2), p99Ms: round(quantile(samples, 0.99), 2) };
  } finally {
    await server.stop();
    rmSync(home, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { p50Ms, p99Ms } = await benchAgentRun();
  process.stdout.write(`agent run of \`true\` over ${RUNS} runs: p50 ${p50Ms} ms, p99 ${p99Ms} ms\n`);
}
