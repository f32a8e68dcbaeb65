/**
 * The idle-memory figure (docs/design.md § Performance):
 * the server process's own RSS (its shells are separate
 * processes and not counted) with 0 sessions and with N idle `bash --norc --noprofile` sessions,
 * in a fresh server process started with --expose-gc; per session = delta / N.
 * The baseline is a server that has answered one API request and has no session, so the delta
 * also carries one-time costs (the headless worker thread, code first run by a session): the
 * per-session figure errs high, never low.
 */
import { performance } from "node:perf_hooks";
import { BENCH_COLS, BENCH_ROWS } from "./direct-pty.ts";
import { figure, type BenchContext, type BenchResult } from "./report.ts";
import { startServerProcess, type MemorySample, type ServerProcess } from "./server-process.ts";
import { MIB, round } from "./stats.ts";
import { waitUntil } from "./wait.ts";

/** Idle sessions measured. */
const SESSIONS = 100;
const QUICK_SESSIONS = 20;
/** 100 bash start-ups plus their first screen parse on a busy 2-core machine. */
const SETTLE_TIMEOUT_MS = 120_000;
/** How often the session list is asked whether every prompt is on its screen. */
const SETTLE_POLL_MS = 200;
/** Interactive bash's prompt as the headless screen shows it: `bash-5.2$` (`#` as root); preview lines are right-trimmed. */
const PROMPT = /[$#]$/;

const SHELL = ["bash", "--norc", "--noprofile"];

/** True once every session's headless screen shows its prompt: bash is idle and the mirror has parsed it. */
async function allPromptsShown(server: ServerProcess, ids: ReadonlySet<string>): Promise<boolean> {
  const res = await server.api("/api/sessions");
  const { sessions } = (await res.json()) as { sessions: Array<{ id: string; status: string; preview: string[] }> };
  let ready = 0;
  for (const s of sessions) {
    if (!ids.has(s.id)) continue;
    if (s.status !== "running") throw new Error(`idle session ${s.id} exited`);
    if (s.preview.some((line) => PROMPT.test(line))) ready++;
  }
  return ready === ids.size;
}

const mib = (bytes: number) => round(bytes / MIB, 2);

function perSession(before: MemorySample, after: MemorySample, n: number) {
  const delta = (key: keyof MemorySample) => round((after[key] - before[key]) / n / 1024, 1);
  return {
    rssKiB: delta("rss"),
    heapUsedKiB: delta("heapUsed"),
    externalKiB: delta("external"),
    arrayBuffersKiB: delta("arrayBuffers"),
  };
}

export async function benchIdleMemory(ctx: BenchContext): Promise<BenchResult> {
  const n = ctx.quick ? QUICK_SESSIONS : SESSIONS;
  const server = await startServerProcess({ cpuProfileDir: ctx.cpuProfileDir });
  try {
    // One request first, so the HTTP path's first-use allocations are in the baseline.
    await (await server.api("/api/sessions")).json();
    const empty = await server.memory();
    const ids = new Set<string>();
    const t0 = performance.now();
    for (let i = 0; i < n; i++) {
      const info = await server.createSession({ command: SHELL, cols: BENCH_COLS, rows: BENCH_ROWS });
      ids.add(info.id);
    }
    await waitUntil(() => allPromptsShown(server, ids), {
      timeoutMs: SETTLE_TIMEOUT_MS,
      intervalMs: SETTLE_POLL_MS,
      what: `${n} bash prompts on their headless screens`,
    });
    ctx.log(`idle-memory: ${n} sessions idle after ${Math.round(performance.now() - t0)} ms`);
    const full = await server.memory();
    const perSessionMiB = (full.rss - empty.rss) / n / MIB;
    ctx.log(`idle-memory: RSS ${mib(empty.rss)} MiB → ${mib(full.rss)} MiB, ${round(perSessionMiB, 3)} MiB per session`);
    const detail = {
      sessions: n,
      command: SHELL,
      rssEmptyBytes: empty.rss,
      rssFullBytes: full.rss,
      empty,
      full,
      perSession: perSession(empty, full, n),
      note: "RSS of the server process only (shells excluded), after global.gc(); the delta includes the one headless worker thread.",
    };
    return [
      figure({
        id: "memory.per-idle-session",
        label: `RSS per idle session (${n} bash)`,
        unit: "MiB",
        value: perSessionMiB,
        goal: { on: "value", op: "<=", target: 1, source: "docs/design.md § Performance" },
        detail,
      }),
      figure({
        id: "memory.server-rss",
        label: `Server RSS, ${n} idle sessions vs none`,
        unit: "MiB",
        value: full.rss / MIB,
        baseline: empty.rss / MIB,
        baselineLabel: "0 sessions",
      }),
    ];
  } finally {
    await server.stop();
  }
}
