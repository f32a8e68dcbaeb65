/**
 * `cat` of a corpus, the way every throughput figure runs it, directly on a PTY in this process
 * or through the server to N WebSocket clients. One program serves both sides:
 *
 *   stty -echo; printf R; read line; cat FILE; printf END_MARKER; read line
 *
 * Clients attach and see `R` first, so the timed bytes arrive live, not as a replay; the
 * keystroke that starts `cat` starts the clock. The program then prints an end marker and waits,
 * so both sides stop the clock on the same event — the last byte of the marker arriving, known
 * by an exact byte count — and neither depends on how the exit is reported (node-pty alone may
 * drop a tail at exit; the server's PTY layer reports an exit about 200 ms after it happened,
 * which is measured separately as `exitMs`). A second keystroke then ends the program.
 *
 * The WebSocket readers are FrameCounters (frame-counter.ts) unless the run asks for `ws`: they
 * parse frames straight off the socket and only count output bytes (keeping a short tail for the
 * marker), which is what a minimal real consumer (`websocat … > /dev/null`) costs, so the readers'
 * own CPU, which shares the machine with the server, stays small. The `ws` library's client
 * (terminal-client.ts) joins every message's socket reads into one Buffer first; it is kept for
 * permessage-deflate (compress) and for comparing like with like.
 */
import { performance } from "node:perf_hooks";
import type { Corpus } from "./corpus.ts";
import { startCpuMeter, type CpuUse } from "./cpu-meter.ts";
import { BENCH_COLS, BENCH_ROWS, spawnDirect } from "./direct-pty.ts";
import { hubUnavailable } from "./hub-probe.ts";
import type { BenchContext, BenchResult } from "./report.ts";
import { startServerProcess, type ServerProcess } from "./server-process.ts";
import { megabytesPerSecond } from "./stats.ts";
import { FrameCounter } from "./frame-counter.ts";
import { TerminalClient } from "./terminal-client.ts";
import { startTtyd, TtydReader, TtydWsClient, type TtydServer } from "./ttyd.ts";

/** Printed after the corpus: no newline (so the PTY adds nothing) and not in any source text. */
export const END_MARKER = "<<webmux-bench-end>>";
/** The `R` the program prints once it waits for the keystroke. */
const READY_MARKER_BYTES = 1;
/** `$0` is the file; no echo, so the keystrokes add no bytes. */
const SCRIPT = `stty -echo; printf R; read line; cat "$0"; printf '%s' '${END_MARKER}'; read line`;
/** A slow run on a loaded machine still ends well within this. */
const RUN_TIMEOUT_MS = 300_000;
/** Session start-up and attach on a loaded machine. */
const READY_TIMEOUT_MS = 15_000;
/** The exit is reported about 200 ms after it happened; anything near this is broken. */
const EXIT_TIMEOUT_MS = 15_000;

export function catCommand(corpus: Corpus): string[] {
  return ["sh", "-c", SCRIPT, corpus.path];
}

/** What each reader must receive after the keystroke: the corpus as the PTY prints it, then the marker. */
export function expectedCatBytes(corpus: Corpus): number {
  return corpus.ptyBytes + END_MARKER.length;
}

/**
 * One reader's view of one run. `ms`: keystroke → last byte; MB/s counts the corpus bytes.
 * `closeCode`: the server closed this connection before the end marker (e.g. 4408 for a reader
 * that fell too far behind); such a reader is incomplete and its `ms` is when it was closed.
 */
export type ReaderResult = { bytes: number; ms: number; complete: boolean; frames: number; wireBytes: number; closeCode: number | null };

export type CatRun = {
  /** who read: node-pty in this process, or the WebSocket client of every reader */
  reader: CatReaderKind | "node-pty" | "ttyd-frame-counter" | "ttyd-ws";
  /** keystroke → last byte at the slowest reader that got everything */
  ms: number;
  mbps: number;
  readers: ReaderResult[];
  /** every reader got exactly the expected bytes, ending with the marker */
  complete: boolean;
  /** second keystroke → exit seen (exit frame / node-pty's exit event) */
  exitMs: number;
  /** CPU time of this process (the readers) during the timed part */
  readerCpuMs: number;
  /** the machine's and the server's (or ttyd's) CPU during the timed part (cpu-meter.ts), null off Linux */
  cpu: CpuUse | null;
};

const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

function summarize(corpus: Corpus, reader: CatRun["reader"], readers: ReaderResult[], exitMs: number, readerCpuMs: number, cpu: CpuUse | null): CatRun {
  const finished = readers.filter((r) => r.closeCode === null);
  const ms = Math.max(...(finished.length > 0 ? finished : readers).map((r) => r.ms));
  return {
    reader,
    ms,
    mbps: megabytesPerSecond(corpus.ptyBytes, ms),
    readers,
    complete: readers.every((r) => r.complete),
    exitMs,
    readerCpuMs,
    cpu,
  };
}

/** The baseline: node-pty in this process, one listener that counts bytes. */
export async function catDirect(corpus: Corpus): Promise<CatRun> {
  const pty = spawnDirect(catCommand(corpus));
  try {
    await pty.waitForText("R", READY_TIMEOUT_MS);
    const expected = READY_MARKER_BYTES + expectedCatBytes(corpus);
    let chunks = 0;
    let tail = "";
    let lastAt = 0;
    let resolveDone!: () => void;
    const done = new Promise<void>((resolve) => (resolveDone = resolve));
    pty.onChunk((chunk) => {
      chunks++;
      lastAt = performance.now();
      if (pty.bytes >= expected - END_MARKER.length) tail = (tail + chunk.toString("latin1")).slice(-END_MARKER.length);
      if (pty.bytes >= expected) resolveDone();
    });
    const cpu0 = cpuMs();
    const meter = startCpuMeter({});
    const start = performance.now();
    pty.pty.write("\r");
    await Promise.race([done, pty.exited.then(() => Promise.reject(new Error("direct cat exited before its end marker")))]);
    const cpu = meter.stop();
    const readerCpuMs = cpuMs() - cpu0;
    const bytes = pty.bytes - READY_MARKER_BYTES;
    const reader: ReaderResult = {
      bytes,
      ms: lastAt - start,
      complete: bytes === expectedCatBytes(corpus) && tail === END_MARKER,
      frames: chunks,
      wireBytes: 0,
      closeCode: null,
    };
    const exitStart = performance.now();
    pty.pty.write("\r");
    await pty.exited;
    return summarize(corpus, "node-pty", [reader], performance.now() - exitStart, readerCpuMs, cpu);
  } finally {
    pty.kill();
  }
}

/** Which WebSocket client reads: the minimal FrameCounter, or the `ws` library's (needed for compress). */
export type CatReaderKind = "frame-counter" | "ws";

export type ServerCatOptions = {
  /** clients attached besides the controller, which never type (observers) */
  observers?: number;
  compress?: boolean;
  /** default: "frame-counter", or "ws" with compress (FrameCounter offers no permessage-deflate) */
  reader?: CatReaderKind;
};

/** What a run needs of a reader; FrameCounter and TerminalClient both have it. */
type CatReader = {
  readonly offset: number;
  readonly outputBytes: number;
  readonly outputFrames: number;
  readonly wireBytes: number;
  readonly lastOutputAt: number;
  readonly exitCode: number | null;
  readonly exitAt: number;
  readonly closed: boolean;
  readonly closeCode: number | null;
  outputTail(length: number): string;
  send(bytes: string): void;
  until(predicate: () => boolean, timeoutMs: number, what: string): Promise<void>;
  close(): Promise<void>;
};

export function catReaderKind(options: ServerCatOptions): CatReaderKind {
  const kind = options.reader ?? (options.compress ? "ws" : "frame-counter");
  if (kind === "frame-counter" && options.compress) throw new Error("FrameCounter does not negotiate permessage-deflate: compress needs reader \"ws\"");
  return kind;
}

/** Through the server: a controller (it types) and `observers` more clients, all reading at full speed. */
export async function catThroughServer(server: ServerProcess, corpus: Corpus, options: ServerCatOptions = {}): Promise<CatRun> {
  const info = await server.createSession({ command: catCommand(corpus), cols: BENCH_COLS, rows: BENCH_ROWS });
  const kind = catReaderKind(options);
  const clients: CatReader[] = [];
  try {
    const connect = (client: string): Promise<CatReader> => {
      const connectOptions = { url: server.url, token: server.token, sessionId: info.id, client };
      return kind === "ws" ? TerminalClient.connect({ ...connectOptions, compress: options.compress === true }) : FrameCounter.connect(connectOptions);
    };
    // The controller first: the first client to attach takes the empty seat.
    clients.push(await connect("bench-controller"));
    for (let i = 0; i < (options.observers ?? 0); i++) clients.push(await connect(`bench-observer-${i + 1}`));
    const controller = clients[0]!;
    await Promise.all(clients.map((c) => c.until(() => c.offset >= READY_MARKER_BYTES, READY_TIMEOUT_MS, "ready marker")));
    const expected = expectedCatBytes(corpus);
    const before = clients.map((c) => ({ bytes: c.outputBytes, frames: c.outputFrames, wire: c.wireBytes }));
    const cpu0 = cpuMs();
    const meter = startCpuMeter({ server: server.pid, host: server.hostPid });
    const start = performance.now();
    controller.send("\r");
    const closedAt = new Map<CatReader, number>();
    await Promise.all(
      clients.map((c, i) =>
        c.until(() => c.outputBytes - before[i]!.bytes >= expected || c.closed, RUN_TIMEOUT_MS, "end marker").then(() => {
          if (c.closed) closedAt.set(c, performance.now());
        }),
      ),
    );
    const cpu = meter.stop();
    const readerCpuMs = cpuMs() - cpu0;
    const readers = clients.map((c, i): ReaderResult => {
      const bytes = c.outputBytes - before[i]!.bytes;
      const cut = closedAt.get(c);
      return {
        bytes,
        ms: (cut ?? c.lastOutputAt) - start,
        complete: cut === undefined && bytes === expected && c.outputTail(END_MARKER.length) === END_MARKER,
        frames: c.outputFrames - before[i]!.frames,
        wireBytes: c.wireBytes - before[i]!.wire,
        closeCode: cut === undefined ? null : c.closeCode,
      };
    });
    if (controller.closed) throw new Error(`cat through the server: the controller's connection closed (${controller.closeCode}) before the end marker`);
    const exitStart = performance.now();
    controller.send("\r");
    await controller.until(() => controller.exitCode !== null, EXIT_TIMEOUT_MS, "exit frame");
    return summarize(corpus, kind, readers, controller.exitAt - exitStart, readerCpuMs, cpu);
  } finally {
    await Promise.all(clients.map((c) => c.close()));
    await server.deleteSession(info.id);
  }
}

/**
 * An idle session kept open for a whole benchmark: the server's headless worker thread lives
 * while any session does, so a run then pays no worker start-up, as on a server in use.
 */
export async function keepServerWarm(server: ServerProcess): Promise<() => Promise<void>> {
  const info = await server.createSession({ command: ["sh", "-c", "read line"], cols: BENCH_COLS, rows: BENCH_ROWS });
  return () => server.deleteSession(info.id);
}

/**
 * What a `cat` benchmark compares, started and ended around `body`: a server process, kept warm
 * (keepServerWarm) while `body` runs, and ttyd serving catCommand(corpus) when it can run (else
 * null, with a one-line note). Skipped when the server's hub does not answer.
 */
export async function withCatServers(
  ctx: BenchContext,
  name: string,
  corpus: Corpus,
  body: (servers: { server: ServerProcess; ttyd: TtydServer | null }) => Promise<BenchResult>,
): Promise<BenchResult> {
  const server = await startServerProcess({ cpuProfileDir: ctx.cpuProfileDir });
  let ttyd: TtydServer | null = null;
  try {
    const unavailable = await hubUnavailable(server);
    if (unavailable) return { skipped: unavailable };
    const started = await startTtyd(catCommand(corpus));
    if (typeof started === "string") ctx.log(`${name}: ttyd arm skipped: ${started}`);
    else ttyd = started;
    const cool = await keepServerWarm(server);
    try {
      return await body({ server, ttyd });
    } finally {
      await cool();
    }
  } finally {
    await ttyd?.stop();
    await server.stop();
  }
}

/**
 * The same `cat` through ttyd (bench/ttyd.ts), which must serve catCommand(corpus): one reader
 * (ttyd starts the program for it), a minimal one like FrameCounter, or the `ws` library's with
 * permessage-deflate offered when `compress`. ttyd has no exit frame: exitMs is the second
 * keystroke → the connection closed.
 */
export async function catThroughTtyd(ttyd: TtydServer, corpus: Corpus, options: { compress?: boolean } = {}): Promise<CatRun> {
  const compress = options.compress === true;
  const client = compress ? await TtydWsClient.connect(ttyd, true) : await TtydReader.connect(ttyd);
  try {
    await client.until(() => client.offset >= READY_MARKER_BYTES, READY_TIMEOUT_MS, "ready marker");
    const expected = expectedCatBytes(corpus);
    const before = { bytes: client.outputBytes, frames: client.outputFrames, wire: client.wireBytes };
    const cpu0 = cpuMs();
    const meter = startCpuMeter({ ttyd: ttyd.pid });
    const start = performance.now();
    client.send("\r");
    await client.until(() => client.outputBytes - before.bytes >= expected, RUN_TIMEOUT_MS, "end marker");
    const cpu = meter.stop();
    const readerCpuMs = cpuMs() - cpu0;
    const bytes = client.outputBytes - before.bytes;
    const reader: ReaderResult = {
      bytes,
      ms: client.lastOutputAt - start,
      complete: bytes === expected && client.outputTail(END_MARKER.length) === END_MARKER,
      frames: client.outputFrames - before.frames,
      wireBytes: client.wireBytes - before.wire,
      closeCode: null,
    };
    const exitStart = performance.now();
    client.send("\r");
    await client.until(() => client.closed, EXIT_TIMEOUT_MS, "close after the exit").catch(() => undefined);
    return summarize(corpus, compress ? "ttyd-ws" : "ttyd-frame-counter", [reader], client.exitAt - exitStart, readerCpuMs, cpu);
  } finally {
    await client.close();
  }
}
