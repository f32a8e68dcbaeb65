/**
 * The resume figure (docs/design.md § Performance): a client attaches, records its resume point
 * (generation, offset) and disconnects; the program then prints exactly 1 MiB; the client
 * reconnects with `?generation=&offset=`. It must get `append` and exactly the missing bytes
 * (payload / missing = 1.00, compared byte for byte with a client that stayed connected),
 * and we count everything the resume cost on the wire (HTTP 101, frame headers, control,
 * position and status frames) and the time from reconnecting to the last byte.
 *
 * The program prints only when told through a FIFO, so nothing is typed and no byte is
 * printed while the client is away except the 1 MiB: `stty -echo -onlcr` keeps the PTY from
 * adding bytes, and `head -c` prints an exact count.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { ensureCorpus } from "./corpus.ts";
import { BENCH_COLS, BENCH_ROWS } from "./direct-pty.ts";
import { hubModuleMissing, hubUnavailable } from "./hub-probe.ts";
import { figure, type BenchContext, type BenchResult } from "./report.ts";
import { startServerProcess, type ServerProcess } from "./server-process.ts";
import { median, MIB, round } from "./stats.ts";
import { TerminalClient } from "./terminal-client.ts";
import { waitUntil, withTimeout } from "./wait.ts";

/** The issues' amount of output while the client is away. */
const RESUME_BYTES = MIB;
const ROUNDS = 5;
const QUICK_ROUNDS = 3;
/** Text to print from: more than one round's worth, so `head -c` always has enough. */
const SOURCE_BYTES = 2 * MIB;
const STEP_TIMEOUT_MS = 30_000;
/** Prints a marker, then exactly RESUME_BYTES each time a line arrives on the FIFO ($0). */
const SCRIPT = `stty -echo -onlcr; printf R; while read line < "$0"; do head -c ${RESUME_BYTES} "$1"; done`;
const MARKER_BYTES = 1;

type Round = {
  mode: string;
  payloadBytes: number;
  missingBytes: number;
  identical: boolean;
  wireBytes: number;
  messageBytes: number;
  resumeMs: number;
  liveMs: number;
};

function collect(client: TerminalClient): { bytes: () => Buffer; stop: () => void } {
  const chunks: Buffer[] = [];
  const stop = client.onOutput((data) => chunks.push(Buffer.from(data)));
  return { bytes: () => Buffer.concat(chunks), stop };
}

async function resumeRound(server: ServerProcess, sessionId: string, fifo: string, away: TerminalClient, live: TerminalClient): Promise<{ outcome: Round; client: TerminalClient }> {
  const { end } = await server.buffer(sessionId);
  await away.until(() => away.offset === end && live.offset === end, STEP_TIMEOUT_MS, "both clients at the end");
  const generation = away.generation!;
  const offset = away.offset;
  await away.close();

  const liveBytes = collect(live);
  const triggered = performance.now();
  // Opening a FIFO blocks (on libuv's pool) until the program opens it: bounded, in case it died.
  await withTimeout(writeFile(fifo, "go\n"), STEP_TIMEOUT_MS, "trigger through the FIFO");
  await live.until(() => live.offset === offset + RESUME_BYTES, STEP_TIMEOUT_MS, "live client has the new output");
  const liveMs = live.lastOutputAt - triggered;
  liveBytes.stop();
  await waitUntil(async () => (await server.buffer(sessionId)).end === offset + RESUME_BYTES, {
    timeoutMs: STEP_TIMEOUT_MS,
    what: "server ring holds the new output",
  });

  const start = performance.now();
  const client = await TerminalClient.connect({ url: server.url, token: server.token, sessionId, client: "bench-resume", generation, offset });
  const resumed = collect(client);
  await client.until(() => client.offset >= offset + RESUME_BYTES && client.statusFrames > 0, STEP_TIMEOUT_MS, "resumed client has the new output");
  resumed.stop();
  const outcome: Round = {
    mode: client.position!.mode,
    payloadBytes: client.outputBytes,
    missingBytes: RESUME_BYTES,
    identical: resumed.bytes().equals(liveBytes.bytes()),
    wireBytes: client.wireBytes,
    messageBytes: client.messageBytes,
    resumeMs: client.lastOutputAt - start,
    liveMs,
  };
  return { outcome, client };
}

export async function benchResumeCost(ctx: BenchContext): Promise<BenchResult> {
  const missing = hubModuleMissing();
  if (missing) return { skipped: missing };
  const rounds = ctx.quick ? QUICK_ROUNDS : ROUNDS;
  const source = await ensureCorpus(SOURCE_BYTES);
  const dir = mkdtempSync(join(tmpdir(), "webmux-bench-resume-"));
  const fifo = join(dir, "go");
  execFileSync("mkfifo", [fifo]);
  const server = await startServerProcess({ cpuProfileDir: ctx.cpuProfileDir });
  try {
    const unavailable = await hubUnavailable(server);
    if (unavailable) return { skipped: unavailable };
    const info = await server.createSession({ command: ["sh", "-c", SCRIPT, fifo, source.path], cols: BENCH_COLS, rows: BENCH_ROWS });
    const live = await TerminalClient.connect({ url: server.url, token: server.token, sessionId: info.id, client: "bench-resume-live" });
    let away = await TerminalClient.connect({ url: server.url, token: server.token, sessionId: info.id, client: "bench-resume" });
    await away.until(() => away.offset >= MARKER_BYTES, STEP_TIMEOUT_MS, "program ready");
    const results: Round[] = [];
    try {
      for (let i = 0; i < rounds; i++) {
        const { outcome, client } = await resumeRound(server, info.id, fifo, away, live);
        away = client;
        results.push(outcome);
        ctx.log(`resume-cost ${i + 1}/${rounds}: ${outcome.mode}, ${outcome.payloadBytes} B payload, ${outcome.wireBytes} B on the wire, ${outcome.resumeMs.toFixed(1)} ms`);
      }
    } finally {
      await away.close();
      await live.close();
      await server.deleteSession(info.id);
    }
    const exact = results.every((r) => r.mode === "append" && r.payloadBytes === r.missingBytes && r.identical);
    const detail = {
      rounds: results.map((r) => ({ ...r, resumeMs: round(r.resumeMs), liveMs: round(r.liveMs) })),
      note: "wireBytes: TCP bytes read by the resumed connection (HTTP 101 answer, WebSocket frame headers, control, position, output and status frames).",
    };
    return [
      figure({
        id: "resume.payload",
        label: `Resume after ${RESUME_BYTES / MIB} MiB away: 0x00 payload vs missing bytes (${rounds} rounds)`,
        unit: "B",
        value: results.reduce((sum, r) => sum + r.payloadBytes, 0),
        baseline: results.reduce((sum, r) => sum + r.missingBytes, 0),
        baselineLabel: "missing",
        goal: { on: "ratio", op: "==", target: 1, source: "docs/design.md § Performance" },
        valid: exact,
        detail,
      }),
      figure({
        id: "resume.wire",
        label: `Resume after ${RESUME_BYTES / MIB} MiB away: wire bytes per resume vs missing`,
        unit: "B",
        value: median(results.map((r) => r.wireBytes)),
        baseline: RESUME_BYTES,
        baselineLabel: "missing",
      }),
      figure({
        id: "resume.time-to-last-byte",
        label: `Resume after ${RESUME_BYTES / MIB} MiB away: reconnect → last byte vs live delivery`,
        unit: "ms",
        value: median(results.map((r) => r.resumeMs)),
        baseline: median(results.map((r) => r.liveMs)),
        baselineLabel: "live client",
      }),
    ];
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
