/**
 * The session host's cost (docs/design.md, What survives a restart), both arms side by side in
 * one run: today's server with its PTYs in-process, and the same server with every program in the
 * session host (`--session-host`: output crosses one more process boundary, a Unix socket, before
 * the WebSocket). Against the direct PTY, as the other figures are:
 *   - cat of the corpus to one WebSocket client (goal ≥ 0.9× direct);
 *   - 1 + 10 observers vs one client, through the host (goal ≥ 0.8×);
 *   - keystroke echo p50 (goal: no worse than ttyd's, which is ≈ 2.0× the direct PTY; ttyd runs
 *     the same program in the same rounds, skipped with a note when its binary is missing);
 *   - RSS per idle session counting both processes, server and host (goal ≤ 3 MiB).
 * Every round runs every arm once, in an order rotated round by round.
 */
import { readFileSync } from "node:fs";
import { BENCH_COLS, BENCH_ROWS, spawnDirect } from "./direct-pty.ts";
import { catDirect, catThroughServer, keepServerWarm, type CatRun } from "./cat-stream.ts";
import { ensureCorpus, FULL_CORPUS_BYTES, QUICK_CORPUS_BYTES } from "./corpus.ts";
import { clientTarget, directTarget, EchoMeter, SCRIPT, ttydTarget } from "./echo-latency.ts";
import { hubModuleMissing, hubUnavailable } from "./hub-probe.ts";
import { figure, type BenchContext, type BenchResult, type Figure } from "./report.ts";
import { startServerProcess, type ServerProcess } from "./server-process.ts";
import { median, MIB, pairedRatio, quantile, round } from "./stats.ts";
import { TerminalClient } from "./terminal-client.ts";
import { startTtyd, TtydReader, type TtydServer } from "./ttyd.ts";
import { waitUntil } from "./wait.ts";
import { rotated } from "./rounds.ts";
import { catRunDetail } from "./ws-throughput.ts";

/** Rounds of the throughput arms (each cats the whole corpus): odd, so a median is one real round. */
const RUNS = 3;
const QUICK_RUNS = 1;
/** Keys per arm and round, after the warm-up. */
const KEYS = 1000;
const QUICK_KEYS = 200;
const WARMUP_KEYS = 2000;
const ECHO_ROUNDS = 5;
const QUICK_ECHO_ROUNDS = 3;
/** Observers beside the controller in the fan-out arm. */
const OBSERVERS = 10;
/** Idle sessions for the memory figure. */
const IDLE_SESSIONS = 20;
const READY_TIMEOUT_MS = 15_000;
/** 20 bash start-ups on a busy 2-core machine. */
const SETTLE_TIMEOUT_MS = 60_000;
const GOAL_SOURCE = "issue: sessions outlive the server (session host), Performance";

type Arm = "direct" | "in-process" | "host" | "host+10";

/** RSS of a process from /proc (the host is not a child of this one: no IPC to ask it). */
function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = /^VmRSS:\s+(\d+) kB/m.exec(status)?.[1];
  return kib ? Number(kib) * 1024 : 0;
}

async function echoP50s(ctx: BenchContext, inProcess: ServerProcess, hosted: ServerProcess): Promise<Map<string, number[]>> {
  const rounds = ctx.quick ? QUICK_ECHO_ROUNDS : ECHO_ROUNDS;
  const keys = ctx.quick ? QUICK_KEYS : KEYS;
  const pty = spawnDirect(["sh", "-c", SCRIPT]);
  const clients: TerminalClient[] = [];
  let ttyd: TtydServer | null = null;
  let ttydReader: TtydReader | null = null;
  try {
    await pty.waitForText("R", READY_TIMEOUT_MS);
    const meters = new Map<string, EchoMeter>([["direct", new EchoMeter(directTarget(pty))]]);
    const started = await startTtyd(["sh", "-c", SCRIPT]);
    if (typeof started === "string") ctx.log(`session-host echo: ttyd arm skipped: ${started}`);
    else {
      ttyd = started;
      ttydReader = await TtydReader.connect(ttyd);
      const reader = ttydReader;
      await reader.until(() => reader.offset >= 1, READY_TIMEOUT_MS, "echo program ready under ttyd");
      meters.set("ttyd", new EchoMeter(ttydTarget(reader)));
    }
    for (const [name, server] of [["in-process", inProcess], ["host", hosted]] as const) {
      const info = await server.createSession({ command: ["sh", "-c", SCRIPT], cols: BENCH_COLS, rows: BENCH_ROWS });
      const client = await TerminalClient.connect({ url: server.url, token: server.token, sessionId: info.id, client: `bench-echo-${name}` });
      clients.push(client);
      await client.until(() => client.offset >= 1, READY_TIMEOUT_MS, "echo program ready");
      meters.set(name, new EchoMeter(clientTarget(client)));
    }
    for (const meter of meters.values()) await meter.measure(WARMUP_KEYS, 0);
    const p50s = new Map<string, number[]>([...meters.keys()].map((k) => [k, []]));
    for (let r = 0; r < rounds; r++) {
      for (const name of rotated([...meters.keys()], r)) p50s.get(name)!.push(quantile(await meters.get(name)!.measure(keys, 0), 0.5));
      const p50 = (name: string) => p50s.get(name)?.[r]?.toFixed(3) ?? "-";
      ctx.log(`session-host echo ${r + 1}/${rounds}: p50 direct ${p50("direct")}, in-process ${p50("in-process")}, host ${p50("host")}, ttyd ${p50("ttyd")} ms`);
    }
    return p50s;
  } finally {
    for (const c of clients) await c.close();
    await ttydReader?.close();
    await ttyd?.stop();
    pty.kill();
  }
}

async function idleMemoryPerSession(ctx: BenchContext, hosted: ServerProcess): Promise<{ perSession: number; server: number; host: number }> {
  const hostPid = hosted.hostPid!;
  await (await hosted.api("/api/sessions")).json();
  const before = { server: (await hosted.memory()).rss, host: rssOf(hostPid) };
  const ids = new Set<string>();
  for (let i = 0; i < IDLE_SESSIONS; i++) ids.add((await hosted.createSession({ command: ["bash", "--norc", "--noprofile"], cols: BENCH_COLS, rows: BENCH_ROWS })).id);
  await waitUntil(
    async () => {
      const { sessions } = (await (await hosted.api("/api/sessions")).json()) as { sessions: { id: string; preview: string[] }[] };
      return sessions.filter((s) => ids.has(s.id) && s.preview.some((l) => /[$#]$/.test(l))).length === ids.size;
    },
    { timeoutMs: SETTLE_TIMEOUT_MS, intervalMs: 200, what: `${IDLE_SESSIONS} bash prompts` },
  );
  const after = { server: (await hosted.memory()).rss, host: rssOf(hostPid) };
  for (const id of ids) await hosted.deleteSession(id);
  const server = (after.server - before.server) / IDLE_SESSIONS;
  const host = (after.host - before.host) / IDLE_SESSIONS;
  ctx.log(`session-host memory: per idle session ${round((server + host) / MIB)} MiB (server ${round(server / MIB)}, host ${round(host / MIB)})`);
  return { perSession: server + host, server, host };
}

export async function benchSessionHost(ctx: BenchContext): Promise<BenchResult> {
  const missing = hubModuleMissing();
  if (missing) return { skipped: missing };
  const corpus = await ensureCorpus(ctx.quick ? QUICK_CORPUS_BYTES : FULL_CORPUS_BYTES);
  const runs = ctx.quick ? QUICK_RUNS : RUNS;
  const inProcess = await startServerProcess({ cpuProfileDir: ctx.cpuProfileDir });
  const hosted = await startServerProcess({ cpuProfileDir: ctx.cpuProfileDir, sessionHost: true }).catch(async (err) => {
    await inProcess.stop();
    throw err;
  });
  try {
    for (const server of [inProcess, hosted]) {
      const unavailable = await hubUnavailable(server);
      if (unavailable) return { skipped: unavailable };
    }
    if (hosted.hostPid === null) return { skipped: "the --session-host server reports no session host" };
    const coolA = await keepServerWarm(inProcess);
    const coolB = await keepServerWarm(hosted);
    const arms = new Map<Arm, { run: () => Promise<CatRun>; runs: CatRun[] }>([
      ["direct", { run: () => catDirect(corpus), runs: [] }],
      ["in-process", { run: () => catThroughServer(inProcess, corpus), runs: [] }],
      ["host", { run: () => catThroughServer(hosted, corpus), runs: [] }],
      ["host+10", { run: () => catThroughServer(hosted, corpus, { observers: OBSERVERS }), runs: [] }],
    ]);
    try {
      for (let i = 0; i < runs; i++) {
        for (const name of rotated([...arms.keys()], i)) arms.get(name)!.runs.push(await arms.get(name)!.run());
        const rate = (name: Arm) => arms.get(name)!.runs[i]!.mbps.toFixed(1);
        ctx.log(`session-host cat ${i + 1}/${runs}: direct ${rate("direct")}, in-process ${rate("in-process")}, host ${rate("host")}, host 1+10 ${rate("host+10")} MB/s`);
      }
    } finally {
      await coolA();
      await coolB();
    }
    const rates = (name: Arm) => arms.get(name)!.runs.map((r) => r.mbps);
    const complete = (name: Arm) => catRunDetail(arms.get(name)!.runs).complete;
    const label = `cat ${corpus.bytes / MIB} MiB to 1 WebSocket`;
    const figures: Figure[] = [
      figure({
        id: "host.throughput",
        label: `${label}, sessions in the session host vs PTY in-process`,
        unit: "MB/s",
        value: median(rates("host")),
        baseline: median(rates("direct")),
        ratio: pairedRatio(rates("host"), rates("direct")),
        baselineLabel: "PTY direct",
        goal: { on: "ratio", op: ">=", target: 0.9, source: GOAL_SOURCE },
        valid: complete("host"),
        detail: { host: catRunDetail(arms.get("host")!.runs), inProcess: catRunDetail(arms.get("in-process")!.runs), direct: catRunDetail(arms.get("direct")!.runs) },
      }),
      figure({
        id: "host.throughput.in-process",
        label: `${label}, sessions in the server (same run) vs PTY in-process`,
        unit: "MB/s",
        value: median(rates("in-process")),
        baseline: median(rates("direct")),
        ratio: pairedRatio(rates("in-process"), rates("direct")),
        baselineLabel: "PTY direct",
        goal: { on: "ratio", op: ">=", target: 0.9, source: GOAL_SOURCE },
        valid: complete("in-process"),
      }),
      figure({
        id: "host.throughput.vs-in-process",
        label: `${label}: session host vs in-process server`,
        unit: "MB/s",
        value: median(rates("host")),
        baseline: median(rates("in-process")),
        ratio: pairedRatio(rates("host"), rates("in-process")),
        baselineLabel: "in-process",
      }),
      figure({
        id: "host.fan-out",
        label: `${label}: 1 + ${OBSERVERS} observers vs 1 client, session host`,
        unit: "MB/s",
        value: median(rates("host+10")),
        baseline: median(rates("host")),
        ratio: pairedRatio(rates("host+10"), rates("host")),
        baselineLabel: "1 client",
        goal: { on: "ratio", op: ">=", target: 0.8, source: GOAL_SOURCE },
        valid: complete("host+10"),
      }),
    ];
    const p50s = await echoP50s(ctx, inProcess, hosted);
    for (const name of ["host", "in-process"] as const) {
      figures.push(
        figure({
          id: name === "host" ? "host.echo.p50" : "host.echo.p50.in-process",
          label: `keystroke echo p50, ${name === "host" ? "sessions in the session host" : "sessions in the server"} vs PTY in-process`,
          unit: "ms",
          value: median(p50s.get(name)!),
          baseline: median(p50s.get("direct")!),
          ratio: pairedRatio(p50s.get(name)!, p50s.get("direct")!),
          baselineLabel: "PTY direct",
          goal: { on: "ratio", op: "<=", target: 2.0, source: GOAL_SOURCE },
        }),
      );
      const ttyd = p50s.get("ttyd");
      if (ttyd)
        figures.push(
          figure({
            id: name === "host" ? "host.echo.p50.vs-ttyd" : "host.echo.p50.in-process.vs-ttyd",
            label: `keystroke echo p50, ${name === "host" ? "sessions in the session host" : "sessions in the server"} vs ttyd (same program, same rounds)`,
            unit: "ms",
            value: median(p50s.get(name)!),
            baseline: median(ttyd),
            ratio: pairedRatio(p50s.get(name)!, ttyd),
            baselineLabel: "ttyd",
            goal: { on: "ratio", op: "<=", target: 1, source: GOAL_SOURCE },
          }),
        );
    }
    const memory = await idleMemoryPerSession(ctx, hosted);
    figures.push(
      figure({
        id: "host.memory.per-idle-session",
        label: `RSS per idle session (${IDLE_SESSIONS} bash), server + session host`,
        unit: "MiB",
        value: memory.perSession / MIB,
        goal: { on: "value", op: "<=", target: 3, source: GOAL_SOURCE },
        detail: { serverBytes: Math.round(memory.server), hostBytes: Math.round(memory.host) },
      }),
    );
    return figures;
  } finally {
    await inProcess.stop();
    await hosted.stop();
  }
}
