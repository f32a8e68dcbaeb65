/**
 * The session host's cost (docs/design.md, What survives a restart, and The session host serves
 * the streams), its two transport designs side by side in one run with the references:
 *   - "in-process": the server with its PTYs in-process (no host, as `--stop-sessions-on-exit`);
 *   - "relay": every program in the session host, each terminal stream relayed through the server
 *     (`WEBMUX_HOST_STREAMS=relay` on the server): a keystroke and its echo cross a Unix socket
 *     between server and host, one more process hop each way;
 *   - "host": the same server with its default transport, the host serving the streams on the
 *     TCP socket the server hands it (where the server does not hand it, this is the relay again);
 *   - the direct PTY in this process, and ttyd serving the same program (skipped with a note when
 *     its binary is missing).
 * Each host arm is given against the direct PTY, the in-process server and ttyd, for:
 *   - cat of the corpus to one WebSocket client (goal on "host": ≥ 0.9× direct);
 *   - 1 + 10 observers vs one client (goal on "host": ≥ 0.8×);
 *   - keystroke echo p50 and p99 (goal on "host": p50 ≤ 2.0× the direct PTY and ≤ ttyd's);
 *   - RSS per idle session counting both processes, server and host ("host" only: ≤ 3 MiB).
 * The relayed arm is reported beside it with no goal. Every round runs every arm once, in an order
 * rotated round by round (rounds.ts); a ratio is the median of the paired rounds' ratios.
 */
import { readFileSync } from "node:fs";
import { BENCH_COLS, BENCH_ROWS, spawnDirect } from "./direct-pty.ts";
import { catCommand, catDirect, catThroughServer, catThroughTtyd, keepServerWarm, type CatRun } from "./cat-stream.ts";
import { ensureCorpus, FULL_CORPUS_BYTES, QUICK_CORPUS_BYTES, type Corpus } from "./corpus.ts";
import { clientTarget, directTarget, EchoMeter, SCRIPT, ttydTarget } from "./echo-latency.ts";
import { hubModuleMissing, hubUnavailable } from "./hub-probe.ts";
import { figure, type BenchContext, type BenchResult, type Figure, type Goal } from "./report.ts";
import { startServerProcess, type ServerProcess, type ServerProcessOptions } from "./server-process.ts";
import { median, MIB, pairedRatio, quantile, round } from "./stats.ts";
import { FrameCounter } from "./frame-counter.ts";
import { startTtyd, TtydReader, type TtydServer } from "./ttyd.ts";
import { waitUntil } from "./wait.ts";
import { runRounds, type Arm } from "./rounds.ts";
import { catRunDetail } from "./ws-throughput.ts";

/** Rounds of the throughput arms (each cats the whole corpus): at least five for a median (docs/design.md § Performance), odd so the median is one real round. */
const RUNS = 5;
const QUICK_RUNS = 1;
/** Keys per arm and round, after the warm-up. */
const KEYS = 1000;
const QUICK_KEYS = 200;
const WARMUP_KEYS = 2000;
/** At least five rounds for a median (docs/design.md § Performance), odd so the median is one real round. */
const ECHO_ROUNDS = 5;
const QUICK_ECHO_ROUNDS = 3;
/** Observers beside the controller in the fan-out arms. */
const OBSERVERS = 10;
/** Idle sessions for the memory figure. */
const IDLE_SESSIONS = 20;
const READY_TIMEOUT_MS = 15_000;
/** 20 bash start-ups on a busy 2-core machine. */
const SETTLE_TIMEOUT_MS = 60_000;
const GOAL_SOURCE = "docs/design.md § Performance (session host)";

/** The servers compared: sessions in the server, and the session host with either transport. */
const SERVER_ARMS = ["in-process", "relay", "host"] as const;
type ServerArm = (typeof SERVER_ARMS)[number];
const HOST_ARMS = ["host", "relay"] as const satisfies readonly ServerArm[];
type HostArm = (typeof HOST_ARMS)[number];
/** Every arm a figure can name, the references included. */
type ArmName = ServerArm | "direct" | "ttyd";

const SERVER_OPTIONS: Record<ServerArm, ServerProcessOptions> = {
  "in-process": {},
  relay: { sessionHost: true, hostStreams: "relay" },
  host: { sessionHost: true },
};

/** How labels and log lines name an arm. */
const ARM_LABEL: Record<ArmName, string> = {
  direct: "PTY direct",
  ttyd: "ttyd",
  "in-process": "sessions in the server",
  relay: "session host, relayed",
  host: "session host, default transport",
};

/** Figure ids: the default host arm keeps the bare ids the figures always had. */
const ARM_ID: Record<ServerArm, string> = { host: "", relay: ".relay", "in-process": ".in-process" };
const vsId = (baseline: ArmName) => (baseline === "direct" ? "" : `.vs-${baseline}`);

const ARMS_NOTE =
  "in-process: PTYs in the server; relay: session host, streams relayed through the server (WEBMUX_HOST_STREAMS=relay); host: session host, the server's default transport (the host serves the streams on the handed TCP socket where the server hands it, else relayed)";

/** RSS of a process from /proc (the host is not a child of this one: no IPC to ask it). */
function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = /^VmRSS:\s+(\d+) kB/m.exec(status)?.[1];
  return kib ? Number(kib) * 1024 : 0;
}

/** One comparison row: `value` arm against `baseline` arm, both given per round (paired). */
function compared(input: {
  id: string;
  label: string;
  unit: string;
  values: readonly number[];
  baselines: readonly number[];
  baselineLabel: string;
  goal?: Goal;
  valid?: boolean;
  detail?: Record<string, unknown>;
}): Figure {
  return figure({
    id: input.id,
    label: input.label,
    unit: input.unit,
    value: median(input.values),
    baseline: median(input.baselines),
    ratio: pairedRatio(input.values, input.baselines),
    baselineLabel: input.baselineLabel,
    ...(input.goal ? { goal: input.goal } : {}),
    ...(input.valid === undefined ? {} : { valid: input.valid }),
    ...(input.detail ? { detail: input.detail } : {}),
  });
}

type CatArm = "direct" | ServerArm | "ttyd" | `${HostArm}+${typeof OBSERVERS}`;

async function throughputFigures(ctx: BenchContext, corpus: Corpus, servers: Record<ServerArm, ServerProcess>): Promise<Figure[]> {
  const runs = ctx.quick ? QUICK_RUNS : RUNS;
  let ttyd: TtydServer | null = null;
  const started = await startTtyd(catCommand(corpus));
  if (typeof started === "string") ctx.log(`session-host cat: ttyd arm skipped: ${started}`);
  else ttyd = started;
  const coolers: Array<() => Promise<void>> = [];
  const arms = new Map<CatArm, Arm<CatRun>>([["direct", { run: () => catDirect(corpus), runs: [] }]]);
  for (const name of SERVER_ARMS) arms.set(name, { run: () => catThroughServer(servers[name], corpus), runs: [] });
  for (const name of HOST_ARMS) arms.set(`${name}+${OBSERVERS}`, { run: () => catThroughServer(servers[name], corpus, { observers: OBSERVERS }), runs: [] });
  if (ttyd) {
    const server = ttyd;
    arms.set("ttyd", { run: () => catThroughTtyd(server, corpus), runs: [] });
  }
  try {
    for (const name of SERVER_ARMS) coolers.push(await keepServerWarm(servers[name]));
    await runRounds(arms, runs, (i) => {
      const rate = (name: CatArm) => arms.get(name)?.runs[i]?.mbps.toFixed(1) ?? "—";
      ctx.log(
        `session-host cat ${i + 1}/${runs}: direct ${rate("direct")}, in-process ${rate("in-process")}, relay ${rate("relay")}, host ${rate("host")}, ` +
          `relay 1+${OBSERVERS} ${rate(`relay+${OBSERVERS}`)}, host 1+${OBSERVERS} ${rate(`host+${OBSERVERS}`)}, ttyd ${rate("ttyd")} MB/s`,
      );
    });
  } finally {
    for (const cool of coolers) await cool();
    await ttyd?.stop();
  }
  const rates = (name: CatArm) => arms.get(name)!.runs.map((r) => r.mbps);
  const complete = (...names: CatArm[]) => names.every((name) => catRunDetail(arms.get(name)!.runs).complete);
  const has = (name: CatArm) => arms.has(name);
  const label = `cat ${corpus.bytes / MIB} MiB to 1 WebSocket`;
  const row = (id: string, text: string, value: CatArm, baseline: CatArm, baselineLabel: string, extra: { goal?: Goal; detail?: Record<string, unknown> } = {}) =>
    compared({ id, label: `${label}, ${text}`, unit: "MB/s", values: rates(value), baselines: rates(baseline), baselineLabel, valid: complete(value, baseline), ...extra });
  const details = Object.fromEntries([...arms.keys()].map((name) => [name, catRunDetail(arms.get(name)!.runs)]));
  const figures: Figure[] = [];
  // Grouped by baseline, so the two host designs sit on adjacent rows.
  for (const arm of ["host", "relay", "in-process"] as const) {
    const goal = arm === "relay" ? undefined : ({ on: "ratio", op: ">=", target: 0.9, source: GOAL_SOURCE } as const);
    figures.push(
      row(`host.throughput${ARM_ID[arm]}`, `${ARM_LABEL[arm]} vs PTY in-process`, arm, "direct", "PTY direct", {
        ...(goal ? { goal } : {}),
        ...(arm === "host" ? { detail: { arms: details, note: ARMS_NOTE } } : {}),
      }),
    );
  }
  for (const arm of HOST_ARMS) figures.push(row(`host.throughput${ARM_ID[arm]}.vs-in-process`, `${ARM_LABEL[arm]} vs in-process server`, arm, "in-process", "in-process"));
  if (has("ttyd"))
    for (const arm of ["host", "relay", "in-process"] as const)
      figures.push(row(`host.throughput${ARM_ID[arm]}.vs-ttyd`, `${ARM_LABEL[arm]} vs ttyd (same program, same rounds)`, arm, "ttyd", "ttyd"));
  figures.push(row("host.throughput.vs-relay", "session host: default transport vs relayed", "host", "relay", "relayed"));
  for (const arm of HOST_ARMS) {
    figures.push(
      row(
        `host.fan-out${ARM_ID[arm]}`,
        `1 + ${OBSERVERS} observers vs 1 client, ${ARM_LABEL[arm]}`,
        `${arm}+${OBSERVERS}`,
        arm,
        "1 client",
        arm === "host" ? { goal: { on: "ratio", op: ">=", target: 0.8, source: GOAL_SOURCE } } : {},
      ),
    );
  }
  return figures;
}

/** Every arm's echo latencies (ms), one array per round. */
async function echoRounds(ctx: BenchContext, servers: Record<ServerArm, ServerProcess>): Promise<Map<ArmName, number[][]>> {
  const rounds = ctx.quick ? QUICK_ECHO_ROUNDS : ECHO_ROUNDS;
  const keys = ctx.quick ? QUICK_KEYS : KEYS;
  const pty = spawnDirect(["sh", "-c", SCRIPT]);
  const clients: FrameCounter[] = [];
  let ttyd: TtydServer | null = null;
  let ttydReader: TtydReader | null = null;
  try {
    await pty.waitForText("R", READY_TIMEOUT_MS);
    const meters = new Map<ArmName, EchoMeter>([["direct", new EchoMeter(directTarget(pty))]]);
    const started = await startTtyd(["sh", "-c", SCRIPT]);
    if (typeof started === "string") ctx.log(`session-host echo: ttyd arm skipped: ${started}`);
    else {
      ttyd = started;
      ttydReader = await TtydReader.connect(ttyd);
      const reader = ttydReader;
      await reader.until(() => reader.offset >= 1, READY_TIMEOUT_MS, "echo program ready under ttyd");
      meters.set("ttyd", new EchoMeter(ttydTarget(reader)));
    }
    for (const name of SERVER_ARMS) {
      const server = servers[name];
      const info = await server.createSession({ command: ["sh", "-c", SCRIPT], cols: BENCH_COLS, rows: BENCH_ROWS });
      const client = await FrameCounter.connect({ url: server.url, token: server.token, sessionId: info.id, client: `bench-echo-${name}` });
      clients.push(client);
      await client.until(() => client.offset >= 1, READY_TIMEOUT_MS, `echo program ready (${name})`);
      meters.set(name, new EchoMeter(clientTarget(client)));
    }
    for (const meter of meters.values()) await meter.measure(WARMUP_KEYS, 0);
    const arms = new Map<ArmName, Arm<number[]>>([...meters].map(([name, meter]) => [name, { run: () => meter.measure(keys, 0), runs: [] }]));
    await runRounds(arms, rounds, (r) => {
      const p = (name: ArmName, q: number) => {
        const latencies = arms.get(name)?.runs[r];
        return latencies ? quantile(latencies, q).toFixed(3) : "—";
      };
      const names: ArmName[] = ["direct", ...SERVER_ARMS, "ttyd"];
      ctx.log(`session-host echo ${r + 1}/${rounds}: p50/p99 ${names.map((n) => `${n} ${p(n, 0.5)}/${p(n, 0.99)}`).join(", ")} ms`);
    });
    const mismatches = [...meters].filter(([, m]) => m.mismatches > 0).map(([name, m]) => `${name} ${m.mismatches}`);
    if (mismatches.length > 0) throw new Error(`session-host echo: echoed bytes differ from the keys sent (${mismatches.join(", ")})`);
    return new Map([...arms].map(([name, arm]) => [name, arm.runs]));
  } finally {
    for (const c of clients) await c.close();
    await ttydReader?.close();
    await ttyd?.stop();
    pty.kill();
  }
}

function echoFigures(latencies: Map<ArmName, number[][]>): Figure[] {
  const perRound = (name: ArmName, q: number) => latencies.get(name)!.map((r) => quantile(r, q));
  const direct = latencies.get("direct")!;
  const shape = `${direct[0]?.length ?? 0} keys × ${direct.length} rounds`;
  const describe = (name: ArmName) => ({ p50Ms: round(median(perRound(name, 0.5))), p99Ms: round(median(perRound(name, 0.99))) });
  const detail = { arms: Object.fromEntries([...latencies.keys()].map((n) => [n, describe(n)])), note: ARMS_NOTE };
  const figures: Figure[] = [];
  for (const [q, pName] of [[0.5, "p50"], [0.99, "p99"]] as const) {
    // Goals as before: p50 of the default host arm and of the in-process server; the relay has none.
    const goalOf = (arm: ServerArm, target: number): Goal | undefined =>
      q === 0.5 && arm !== "relay" ? { on: "ratio", op: "<=", target, source: GOAL_SOURCE } : undefined;
    const row = (arm: ServerArm, baseline: ArmName, baselineLabel: string, label: string, goal?: Goal) =>
      compared({
        id: `host.echo.${pName}${ARM_ID[arm]}${vsId(baseline)}`,
        label: `keystroke echo ${pName}, ${shape}, ${label}`,
        unit: "ms",
        values: perRound(arm, q),
        baselines: perRound(baseline, q),
        baselineLabel,
        ...(goal ? { goal } : {}),
        ...(figures.length === 0 ? { detail } : {}),
      });
    // Grouped by baseline, so the two host designs sit on adjacent rows.
    for (const arm of ["host", "relay", "in-process"] as const) figures.push(row(arm, "direct", "PTY direct", `${ARM_LABEL[arm]} vs PTY in-process`, goalOf(arm, 2.0)));
    for (const arm of HOST_ARMS) figures.push(row(arm, "in-process", "in-process", `${ARM_LABEL[arm]} vs in-process server`));
    if (latencies.has("ttyd"))
      for (const arm of ["host", "relay", "in-process"] as const) figures.push(row(arm, "ttyd", "ttyd", `${ARM_LABEL[arm]} vs ttyd (same program, same rounds)`, goalOf(arm, 1)));
    figures.push(row("host", "relay", "relayed", "session host: default transport vs relayed"));
  }
  return figures;
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
  const started: ServerProcess[] = [];
  try {
    const servers = {} as Record<ServerArm, ServerProcess>;
    for (const name of SERVER_ARMS) {
      const server = await startServerProcess({ cpuProfileDir: ctx.cpuProfileDir, ...SERVER_OPTIONS[name] });
      started.push(server);
      servers[name] = server;
      const unavailable = await hubUnavailable(server);
      if (unavailable) return { skipped: unavailable };
      if (SERVER_OPTIONS[name].sessionHost && server.hostPid === null) return { skipped: `the --session-host server of the ${name} arm reports no session host` };
    }
    const figures = await throughputFigures(ctx, corpus, servers);
    figures.push(...echoFigures(await echoRounds(ctx, servers)));
    const memory = await idleMemoryPerSession(ctx, servers.host);
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
    for (const server of started) await server.stop();
  }
}
