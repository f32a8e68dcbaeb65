/**
 * Memory that comes back: a fresh server's RSS (after a full GC, its shells excluded), then
 * 100 MiB `cat` through 10 sessions at once (10 MiB each, every session with a minimal reader
 * attached, as a real client would be), then every session deleted; the figure is the RSS after
 * that against the fresh server's. Beside it, a fresh server's RSS against a fresh ttyd's
 * (bench/ttyd.ts; skipped with a note when it cannot run).
 */
import { performance } from "node:perf_hooks";
import { catCommand, expectedCatBytes } from "./cat-stream.ts";
import { ensureCorpus } from "./corpus.ts";
import { BENCH_COLS, BENCH_ROWS } from "./direct-pty.ts";
import { FrameCounter } from "./frame-counter.ts";
import { hubModuleMissing, hubUnavailable } from "./hub-probe.ts";
import { figure, type BenchContext, type BenchResult, type Figure } from "./report.ts";
import { startServerProcess, type MemorySample } from "./server-process.ts";
import { MIB, round } from "./stats.ts";
import { startTtyd } from "./ttyd.ts";
import { waitUntil } from "./wait.ts";

/** The load: 100 MiB through 10 sessions (docs/design.md § Performance). */
const SESSIONS = 10;
const BYTES_PER_SESSION = 10 * MIB;
const QUICK_BYTES_PER_SESSION = 2 * MIB;
/** How far above a fresh server's RSS the server may stay once the sessions are gone. */
const RETURN_GOAL_MIB = 30;
const RUN_TIMEOUT_MS = 300_000;
const READY_TIMEOUT_MS = 30_000;
/** RSS is read every SETTLE_POLL_MS until it held within SETTLED_DELTA_BYTES for SETTLED_FOR_MS (the server releases memory about a second after a deletion), or the deadline passes. */
const SETTLED_DELTA_BYTES = 1 * MIB;
const SETTLED_FOR_MS = 3_000;
const SETTLE_POLL_MS = 500;
const SETTLE_TIMEOUT_MS = 15_000;

const mib = (bytes: number) => round(bytes / MIB, 2);

export async function benchMemoryReturn(ctx: BenchContext): Promise<BenchResult> {
  const missing = hubModuleMissing();
  if (missing) return { skipped: missing };
  const corpus = await ensureCorpus(ctx.quick ? QUICK_BYTES_PER_SESSION : BYTES_PER_SESSION);
  const server = await startServerProcess({ cpuProfileDir: ctx.cpuProfileDir });
  try {
    const unavailable = await hubUnavailable(server);
    if (unavailable) return { skipped: unavailable };
    await (await server.api("/api/sessions")).json();
    const fresh = await server.memory();
    const ids: string[] = [];
    const readers: FrameCounter[] = [];
    for (let i = 0; i < SESSIONS; i++) {
      const info = await server.createSession({ command: catCommand(corpus), cols: BENCH_COLS, rows: BENCH_ROWS });
      ids.push(info.id);
      readers.push(await FrameCounter.connect({ url: server.url, token: server.token, sessionId: info.id, client: `bench-memory-${i}` }));
    }
    await Promise.all(readers.map((r) => r.until(() => r.offset >= 1, READY_TIMEOUT_MS, "ready marker")));
    const expected = expectedCatBytes(corpus);
    const t0 = performance.now();
    for (const r of readers) r.send("\r");
    await Promise.all(readers.map((r) => r.until(() => r.outputBytes >= expected, RUN_TIMEOUT_MS, "end marker")));
    const loaded = await server.memory();
    ctx.log(`memory-return: ${SESSIONS} × ${corpus.bytes / MIB} MiB in ${Math.round(performance.now() - t0)} ms, RSS ${mib(fresh.rss)} → ${mib(loaded.rss)} MiB`);
    await Promise.all(readers.map((r) => r.close()));
    for (const id of ids) await server.deleteSession(id);
    let after: MemorySample = await server.memory();
    const samples = [after.rss];
    const window = Math.ceil(SETTLED_FOR_MS / SETTLE_POLL_MS) + 1;
    await waitUntil(
      async () => {
        after = await server.memory();
        samples.push(after.rss);
        const recent = samples.slice(-window);
        return recent.length === window && Math.max(...recent) - Math.min(...recent) < SETTLED_DELTA_BYTES;
      },
      { timeoutMs: SETTLE_TIMEOUT_MS, intervalMs: SETTLE_POLL_MS, what: "RSS settled" },
    ).catch(() => undefined);
    ctx.log(`memory-return: after deleting them RSS ${mib(after.rss)} MiB (fresh ${mib(fresh.rss)} MiB)`);
    const figures: Figure[] = [
      figure({
        id: "memory.returned",
        label: `Server RSS after ${SESSIONS} sessions × ${corpus.bytes / MIB} MiB cat, all deleted, minus a fresh server's`,
        unit: "MiB",
        value: (after.rss - fresh.rss) / MIB,
        goal: { on: "value", op: "<=", target: RETURN_GOAL_MIB, source: "docs/design.md § Performance" },
        detail: { fresh, loaded, after, rssSamplesMiB: samples.map(mib), sessions: SESSIONS, bytesPerSession: corpus.bytes },
      }),
    ];
    const ttyd = await startTtyd(["bash", "--norc", "--noprofile"]);
    if (typeof ttyd === "string") ctx.log(`memory-return: ttyd arm skipped: ${ttyd}`);
    else {
      try {
        figures.push(
          figure({
            id: "memory.fresh-rss.vs-ttyd",
            label: "RSS of a fresh server (no session) vs a fresh ttyd",
            unit: "MiB",
            value: fresh.rss / MIB,
            baseline: ttyd.rssBytes() / MIB,
            baselineLabel: "ttyd",
          }),
        );
      } finally {
        await ttyd.stop();
      }
    }
    return figures;
  } finally {
    await server.stop();
  }
}
