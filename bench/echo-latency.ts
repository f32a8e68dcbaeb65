/**
 * Keystroke → echoed byte, p50 and p99, back to back and with 10 ms gaps (typing), for:
 *   - webmux: through the server's WebSocket (its own process), read by FrameCounter, the same raw
 *     client code (RawWsSocket + WsFrameParser) that reads ttyd, so a difference is the servers';
 *   - ttyd (bench/ttyd.ts): the same program behind another out-of-process server with a
 *     WebSocket hop, the peer to beat (skipped with a note when it cannot run);
 *   - webmux under Bun (bench/bun-server.ts): the same server on the other runtime;
 *   - the PTY directly in this process: the reference every ratio is also given against;
 *   - a bare `ws` echo hop between two Node processes, plus the direct PTY's round trip: what a
 *     Node server on `ws` pays at least for the hop. Not a floor for a terminal server: ttyd
 *     comes in under it.
 * The echo comes from a program, as with a shell's line editor: `stty raw -echo; exec cat`
 * reads each byte and writes it back. Every round runs every arm once, in an order rotated round
 * by round, so all of them see the same machine; a figure is the median of the rounds' quantiles
 * and its ratio the median of the rounds' ratios (stats.ts pairedRatio).
 */
import { performance } from "node:perf_hooks";
import { startBunServer, type BunServer } from "./bun-server.ts";
import { BENCH_COLS, BENCH_ROWS, spawnDirect, type DirectPty } from "./direct-pty.ts";
import { hubModuleMissing, hubUnavailable } from "./hub-probe.ts";
import { figure, type BenchContext, type BenchResult, type Figure, type Goal } from "./report.ts";
import { startServerProcess } from "./server-process.ts";
import { median, pairedRatio, quantile, round } from "./stats.ts";
import { startCpuMeter } from "./cpu-meter.ts";
import { FrameCounter } from "./frame-counter.ts";
import { startTtyd, TtydReader, type TtydServer } from "./ttyd.ts";
import { startEchoFloor } from "./ws-echo-floor.ts";
import { rotated } from "./rounds.ts";
import { withTimeout } from "./wait.ts";

/** Rounds: at least five for a median (docs/design.md § Performance), odd so the median is one real round. */
const ROUNDS = 5;
const QUICK_ROUNDS = 3;
/** Keys per arm and round, back to back: 1000. */
const KEYS = 1000;
const QUICK_KEYS = 200;
/** Keys per arm and round with gaps: 200 × 10 ms × 5 arms × 5 rounds keeps typing within a minute and a half. */
const TYPING_KEYS = 200;
const QUICK_TYPING_KEYS = 50;
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
export const SCRIPT = "stty raw -echo; printf R; exec cat";
const ALPHABET = "abcdefghijklmnopqrstuvwxyz";

/** One side of the comparison: send a key, be told about every echoed chunk. */
type EchoTarget = { send(key: string): void; subscribe(listener: (data: Uint8Array) => void): void };

export class EchoMeter {
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

export function directTarget(pty: DirectPty): EchoTarget {
  return { send: (key) => pty.pty.write(key), subscribe: (listener) => pty.onChunk(listener) };
}

/** A webmux reader: FrameCounter, the raw reader TtydReader's twin, so both servers are read by the same client code. */
export type EchoClient = { send(key: string): void; onOutput(listener: (data: Uint8Array) => void): unknown };

export function clientTarget(client: EchoClient): EchoTarget {
  return { send: (key) => client.send(key), subscribe: (listener) => void client.onOutput(listener) };
}

export function ttydTarget(reader: TtydReader): EchoTarget {
  return { send: (key) => reader.send(key), subscribe: (listener) => reader.onOutput(listener) };
}

type ArmName = "webmux" | "bun" | "ttyd" | "direct" | "hop";
/**
 * One arm's samples: every latency, and each round's on its own (a round's quantiles are paired
 * across arms); and per round the CPU its server spent per key (µs, every thread, kernel time
 * included; cpu-meter.ts), where there is a server process to watch.
 */
type ArmSamples = { all: number[]; rounds: number[][]; cpuUsPerKey: number[] };

const GOAL_SOURCE = "docs/design.md § Performance";

function describe(samples: ArmSamples) {
  const q = (p: number) => round(median(samples.rounds.map((r) => quantile(r, p))));
  return {
    samples: samples.all.length,
    rounds: samples.rounds.length,
    p50Ms: q(0.5),
    p90Ms: q(0.9),
    p99Ms: q(0.99),
    maxMs: round(Math.max(...samples.all)),
    /** median over the rounds of the server's CPU per key (µs, all its threads), null without a server process */
    serverCpuUsPerKey: samples.cpuUsPerKey.length > 0 ? round(median(samples.cpuUsPerKey), 1) : null,
  };
}

function latencyFigures(pattern: string, label: string, arms: Map<ArmName, ArmSamples>, goals: { vsDirectP50?: Goal; vsTtydP50?: Goal; vsTtydP99?: Goal }): Figure[] {
  const webmux = arms.get("webmux")!;
  const direct = arms.get("direct")!;
  const ttyd = arms.get("ttyd") ?? null;
  const hop = arms.get("hop")!;
  const perRound = (a: ArmSamples, p: number) => a.rounds.map((r) => quantile(r, p));
  const value = (a: ArmSamples, p: number) => median(perRound(a, p));
  const ratio = (a: ArmSamples, b: ArmSamples, p: number) => pairedRatio(perRound(a, p), perRound(b, p));
  const bun = arms.get("bun") ?? null;
  const details = { webmux: describe(webmux), bun: bun ? describe(bun) : null, direct: describe(direct), ttyd: ttyd ? describe(ttyd) : null, bareWsHop: describe(hop) };
  const keys = `${webmux.all.length / webmux.rounds.length} keys × ${webmux.rounds.length} rounds`;
  const figures: Figure[] = [];
  for (const [p, name] of [[0.5, "p50"], [0.99, "p99"]] as const) {
    figures.push(
      figure({
        id: `echo.${pattern}.${name}`,
        label: `Echo ${name}, ${label}, ${keys}: webmux vs PTY direct`,
        unit: "ms",
        value: value(webmux, p),
        baseline: value(direct, p),
        baselineLabel: "PTY direct",
        ratio: ratio(webmux, direct, p),
        goal: name === "p50" ? (goals.vsDirectP50 ?? null) : null,
        detail: details,
      }),
    );
    if (ttyd) {
      figures.push(
        figure({
          id: `echo.${pattern}.${name}.vs-ttyd`,
          label: `Echo ${name}, ${label}, ${keys}: webmux vs ttyd`,
          unit: "ms",
          value: value(webmux, p),
          baseline: value(ttyd, p),
          baselineLabel: "ttyd",
          ratio: ratio(webmux, ttyd, p),
          goal: (name === "p50" ? goals.vsTtydP50 : goals.vsTtydP99) ?? null,
        }),
        figure({
          id: `echo.${pattern}.${name}.ttyd`,
          label: `Echo ${name}, ${label}, ${keys}: ttyd vs PTY direct`,
          unit: "ms",
          value: value(ttyd, p),
          baseline: value(direct, p),
          baselineLabel: "PTY direct",
          ratio: ratio(ttyd, direct, p),
        }),
      );
    }
  }
  if (bun) {
    for (const [p, name] of [[0.5, "p50"], [0.99, "p99"]] as const) {
      figures.push(
        figure({
          id: `echo.${pattern}.${name}.bun`,
          label: `Echo ${name}, ${label}, ${keys}: webmux under Bun vs under Node`,
          unit: "ms",
          value: value(bun, p),
          baseline: value(webmux, p),
          baselineLabel: "Node",
          ratio: ratio(bun, webmux, p),
        }),
      );
    }
  }
  const hopPlusDirect = hop.rounds.map((r, i) => quantile(r, 0.5) + quantile(direct.rounds[i]!, 0.5));
  figures.push(
    figure({
      id: `echo.${pattern}.bare-hop`,
      label: `Echo p50, ${label}: webmux vs PTY direct + a bare Node ws echo hop (not a floor: ttyd beats it)`,
      unit: "ms",
      value: value(webmux, 0.5),
      baseline: median(hopPlusDirect),
      baselineLabel: "direct + bare hop",
      ratio: pairedRatio(perRound(webmux, 0.5), hopPlusDirect),
      detail: {
        note: "p50 of the PTY round trip in this process + p50 of a WebSocket echo (ws library, Node) to a process that does nothing else: the least a Node server on ws pays for the hop, not a least for every server",
      },
    }),
  );
  return figures;
}

export async function benchEchoLatency(ctx: BenchContext): Promise<BenchResult> {
  const missing = hubModuleMissing();
  if (missing) return { skipped: missing };
  const rounds = ctx.quick ? QUICK_ROUNDS : ROUNDS;
  const keysFor = { "back-to-back": ctx.quick ? QUICK_KEYS : KEYS, typing: ctx.quick ? QUICK_TYPING_KEYS : TYPING_KEYS };
  const server = await startServerProcess({ cpuProfileDir: ctx.cpuProfileDir });
  const pty = spawnDirect(["sh", "-c", SCRIPT]);
  let ttyd: TtydServer | null = null;
  let bunServer: BunServer | null = null;
  try {
    const unavailable = await hubUnavailable(server);
    if (unavailable) return { skipped: unavailable };
    await pty.waitForText("R", READY_TIMEOUT_MS);
    const info = await server.createSession({ command: ["sh", "-c", SCRIPT], cols: BENCH_COLS, rows: BENCH_ROWS });
    const client = await FrameCounter.connect({ url: server.url, token: server.token, sessionId: info.id, client: "bench-echo" });
    const floorTarget = await startEchoFloor();
    const started = await startTtyd(["sh", "-c", SCRIPT]);
    let ttydReader: TtydReader | null = null;
    if (typeof started === "string") ctx.log(`echo-latency: ttyd arm skipped: ${started}`);
    else {
      ttyd = started;
      ttydReader = await TtydReader.connect(ttyd);
      await ttydReader.until(() => ttydReader!.offset >= 1, READY_TIMEOUT_MS, "echo program ready");
    }
    const bunStarted = await startBunServer();
    let bunClient: FrameCounter | null = null;
    if (typeof bunStarted === "string") ctx.log(`echo-latency: Bun arm skipped: ${bunStarted}`);
    else {
      bunServer = bunStarted;
      const bunInfo = await bunServer.createSession({ command: ["sh", "-c", SCRIPT], cols: BENCH_COLS, rows: BENCH_ROWS });
      bunClient = await FrameCounter.connect({ url: bunServer.url, token: bunServer.token, sessionId: bunInfo.id, client: "bench-echo" });
      await bunClient.until(() => bunClient!.offset >= 1, READY_TIMEOUT_MS, "echo program ready under bun");
    }
    try {
      await client.until(() => client.offset >= 1, READY_TIMEOUT_MS, "echo program ready");
      const meters = new Map<ArmName, EchoMeter>([
        ["direct", new EchoMeter(directTarget(pty))],
        ["webmux", new EchoMeter(clientTarget(client))],
        ["hop", new EchoMeter(floorTarget)],
      ]);
      if (ttydReader) meters.set("ttyd", new EchoMeter(ttydTarget(ttydReader)));
      if (bunClient) meters.set("bun", new EchoMeter(clientTarget(bunClient)));
      /** the process whose CPU per key each arm reports */
      const serverPids = new Map<ArmName, number>([["webmux", server.pid]]);
      if (ttyd) serverPids.set("ttyd", ttyd.pid);
      if (bunServer) serverPids.set("bun", bunServer.pid);
      for (const meter of meters.values()) await meter.measure(WARMUP_KEYS, 0);
      const figures: Figure[] = [];
      for (const [pattern, label, gap] of [
        ["back-to-back", "back to back", 0],
        ["typing", `${TYPING_GAP_MS} ms gaps`, TYPING_GAP_MS],
      ] as const) {
        const samples = new Map<ArmName, ArmSamples>([...meters.keys()].map((name) => [name, { all: [], rounds: [], cpuUsPerKey: [] }]));
        for (let r = 0; r < rounds; r++) {
          for (const name of rotated([...meters.keys()], r)) {
            const pid = serverPids.get(name) ?? null;
            const cpu = startCpuMeter({ server: pid });
            const latencies = await meters.get(name)!.measure(keysFor[pattern], gap);
            const spent = cpu.stop()?.processes.server;
            const arm = samples.get(name)!;
            arm.rounds.push(latencies);
            arm.all.push(...latencies);
            if (spent) arm.cpuUsPerKey.push(((spent.mainMs + spent.otherThreadsMs) * 1000) / latencies.length);
          }
          const p50 = (name: ArmName) => (samples.has(name) ? quantile(samples.get(name)!.rounds[r]!, 0.5).toFixed(3) : "—");
          const cpu = (name: ArmName) => samples.get(name)?.cpuUsPerKey[r]?.toFixed(0) ?? "—";
          ctx.log(`echo-latency ${label} ${r + 1}/${rounds}: p50 webmux ${p50("webmux")}, under Bun ${p50("bun")}, ttyd ${p50("ttyd")}, direct ${p50("direct")}, bare hop ${p50("hop")} ms; server CPU per key webmux ${cpu("webmux")}, Bun ${cpu("bun")}, ttyd ${cpu("ttyd")} µs`);
        }
        figures.push(
          ...latencyFigures(
            pattern,
            label,
            samples,
            pattern === "back-to-back"
              ? {
                  vsDirectP50: { on: "ratio", op: "<=", target: 1.6, source: GOAL_SOURCE },
                  vsTtydP50: { on: "ratio", op: "<=", target: 1, source: GOAL_SOURCE },
                  vsTtydP99: { on: "ratio", op: "<=", target: 1, source: GOAL_SOURCE },
                }
              : { vsTtydP50: { on: "ratio", op: "<=", target: 1, source: GOAL_SOURCE } },
          ),
        );
      }
      const mismatches = [...meters.entries()].filter(([, m]) => m.mismatches > 0).map(([name, m]) => `${name} ${m.mismatches}`);
      if (mismatches.length > 0) throw new Error(`echoed bytes differ from the keys sent (${mismatches.join(", ")})`);
      return figures;
    } finally {
      await ttydReader?.close();
      await bunClient?.close();
      await floorTarget.stop();
      await client.close();
      await server.deleteSession(info.id);
    }
  } finally {
    pty.kill();
    await ttyd?.stop();
    await bunServer?.stop();
    await server.stop();
  }
}
