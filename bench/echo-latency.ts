/**
 * The echo-latency figure (docs/design.md § Performance):
 * keystroke → echoed byte through the server's
 * WebSocket vs directly on a PTY in this process, p50 and p99 over 1000 keys, back to back
 * and with 10 ms gaps (typing). The echo comes from a program, as with a shell's line editor:
 * `stty raw -echo; exec cat` reads each byte and writes it back. The arms alternate in blocks,
 * so both see the same machine.
 */
import { performance } from "node:perf_hooks";
import { BENCH_COLS, BENCH_ROWS, spawnDirect, type DirectPty } from "./direct-pty.ts";
import { hubModuleMissing, hubUnavailable } from "./hub-probe.ts";
import { figure, type BenchContext, type BenchResult, type Figure } from "./report.ts";
import { startServerProcess } from "./server-process.ts";
import { quantile, round } from "./stats.ts";
import { TerminalClient } from "./terminal-client.ts";
import { startEchoFloor } from "./ws-echo-floor.ts";
import { withTimeout } from "./wait.ts";

/** The issues' sample size per arm and pattern. */
const KEYS = 1000;
const QUICK_KEYS = 200;
/** Keys per block before switching arms. */
const BLOCK_KEYS = 100;
/**
 * Unrecorded keys per arm first: a server that has run for a while has its input and output paths
 * optimised (V8 tiers them up after some thousands of calls; 50 keys measured a cold server).
 * Both arms get the same.
 */
const WARMUP_KEYS = 3000;
/** The "typing" pattern: a pause after each echo before the next key. */
const TYPING_GAP_MS = 10;
/** A key whose echo takes longer than this means something is broken, not slow. */
const ECHO_TIMEOUT_MS = 5_000;
const READY_TIMEOUT_MS = 15_000;
const SCRIPT = "stty raw -echo; printf R; exec cat";
const ALPHABET = "abcdefghijklmnopqrstuvwxyz";

/** One side of the comparison: send a key, be told about every echoed chunk. */
type EchoTarget = { send(key: string): void; subscribe(listener: (data: Uint8Array) => void): void };

class EchoMeter {
  private pending: (() => void) | null = null;
  private expected = 0;
  mismatches = 0;

  constructor(private readonly target: EchoTarget) {
    target.subscribe((data) => {
      for (const byte of data) {
        if (byte !== this.expected) this.mismatches++;
      }
      const resolve = this.pending;
      this.pending = null;
      resolve?.();
    });
  }

  /** Latencies (ms) of `count` keys, each sent once the previous one's echo arrived (plus `gapMs`). */
  async measure(count: number, gapMs: number): Promise<number[]> {
    const latencies: number[] = [];
    for (let i = 0; i < count; i++) {
      const key = ALPHABET[i % ALPHABET.length]!;
      this.expected = key.charCodeAt(0);
      const echoed = new Promise<void>((resolve) => (this.pending = resolve));
      const start = performance.now();
      this.target.send(key);
      await withTimeout(echoed, ECHO_TIMEOUT_MS, `echo of ${JSON.stringify(key)}`);
      latencies.push(performance.now() - start);
      if (gapMs > 0) await new Promise((resolve) => setTimeout(resolve, gapMs));
    }
    return latencies;
  }
}

function directTarget(pty: DirectPty): EchoTarget {
  return { send: (key) => pty.pty.write(key), subscribe: (listener) => pty.onChunk(listener) };
}

function clientTarget(client: TerminalClient): EchoTarget {
  return { send: (key) => client.send(key), subscribe: (listener) => void client.onOutput(listener) };
}

function latencyFigures(pattern: string, label: string, ws: number[], direct: number[], floor: number[]): Figure[] {
  const detail = (samples: number[]) => ({
    samples: samples.length,
    p50Ms: round(quantile(samples, 0.5)),
    p90Ms: round(quantile(samples, 0.9)),
    p99Ms: round(quantile(samples, 0.99)),
    maxMs: round(Math.max(...samples)),
  });
  const details = { webSocket: detail(ws), direct: detail(direct), webSocketEchoFloor: detail(floor) };
  return [
    figure({
      id: `echo.${pattern}.p50`,
      label: `Echo latency p50, ${label}, ${ws.length} keys`,
      unit: "ms",
      value: quantile(ws, 0.5),
      baseline: quantile(direct, 0.5),
      baselineLabel: "PTY direct",
      goal: { on: "ratio", op: "<=", target: 1.8, source: "docs/design.md § Performance (ttyd: ~2.0)" },
      detail: details,
    }),
    figure({
      id: `echo.${pattern}.p99`,
      label: `Echo latency p99, ${label}, ${ws.length} keys`,
      unit: "ms",
      value: quantile(ws, 0.99),
      baseline: quantile(direct, 0.99),
      baselineLabel: "PTY direct",
      goal: { on: "ratio", op: "<=", target: 1.5, source: "docs/design.md § Performance (ttyd: ~1.5)" },
      detail: details,
    }),
    figure({
      id: `echo.${pattern}.floor`,
      label: `Echo latency p50, ${label}: webmux vs direct PTY + a bare WebSocket echo hop`,
      unit: "ms",
      value: quantile(ws, 0.5),
      baseline: quantile(direct, 0.5) + quantile(floor, 0.5),
      baselineLabel: "floor",
      detail: {
        note: "floor = p50 of the PTY round trip in-process + p50 of a WebSocket echo to a process that does nothing else; any out-of-process server pays both",
        floorRatioToDirect: round((quantile(direct, 0.5) + quantile(floor, 0.5)) / quantile(direct, 0.5)),
      },
    }),
  ];
}

export async function benchEchoLatency(ctx: BenchContext): Promise<BenchResult> {
  const missing = hubModuleMissing();
  if (missing) return { skipped: missing };
  const keys = ctx.quick ? QUICK_KEYS : KEYS;
  const server = await startServerProcess({ cpuProfileDir: ctx.cpuProfileDir });
  const pty = spawnDirect(["sh", "-c", SCRIPT]);
  try {
    const unavailable = await hubUnavailable(server);
    if (unavailable) return { skipped: unavailable };
    await pty.waitForText("R", READY_TIMEOUT_MS);
    const info = await server.createSession({ command: ["sh", "-c", SCRIPT], cols: BENCH_COLS, rows: BENCH_ROWS });
    const client = await TerminalClient.connect({ url: server.url, token: server.token, sessionId: info.id, client: "bench-echo" });
    const floorTarget = await startEchoFloor();
    try {
      await client.until(() => client.offset >= 1, READY_TIMEOUT_MS, "echo program ready");
      const directMeter = new EchoMeter(directTarget(pty));
      const wsMeter = new EchoMeter(clientTarget(client));
      const floorMeter = new EchoMeter(floorTarget);
      await directMeter.measure(WARMUP_KEYS, 0);
      await wsMeter.measure(WARMUP_KEYS, 0);
      await floorMeter.measure(WARMUP_KEYS, 0);
      const figures: Figure[] = [];
      for (const [pattern, label, gap] of [
        ["back-to-back", "back to back", 0],
        ["typing", `${TYPING_GAP_MS} ms gaps`, TYPING_GAP_MS],
      ] as const) {
        const direct: number[] = [];
        const ws: number[] = [];
        const floor: number[] = [];
        for (let done = 0; done < keys; done += BLOCK_KEYS) {
          const n = Math.min(BLOCK_KEYS, keys - done);
          direct.push(...(await directMeter.measure(n, gap)));
          ws.push(...(await wsMeter.measure(n, gap)));
          floor.push(...(await floorMeter.measure(n, gap)));
        }
        ctx.log(
          `echo-latency ${label}: WebSocket p50 ${quantile(ws, 0.5).toFixed(3)} / p99 ${quantile(ws, 0.99).toFixed(3)} ms, direct p50 ${quantile(direct, 0.5).toFixed(3)} / p99 ${quantile(direct, 0.99).toFixed(3)} ms`,
        );
        ctx.log(`echo-latency ${label}: bare WebSocket echo hop p50 ${quantile(floor, 0.5).toFixed(3)} / p99 ${quantile(floor, 0.99).toFixed(3)} ms`);
        figures.push(...latencyFigures(pattern, label, ws, direct, floor));
      }
      if (directMeter.mismatches + wsMeter.mismatches + floorMeter.mismatches > 0) {
        throw new Error(`echoed bytes differ from the keys sent (direct ${directMeter.mismatches}, WebSocket ${wsMeter.mismatches})`);
      }
      return figures;
    } finally {
      await floorTarget.stop();
      await client.close();
      await server.deleteSession(info.id);
    }
  } finally {
    pty.kill();
    await server.stop();
  }
}
