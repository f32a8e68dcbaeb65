/**
 * The interrupt figure (docs/design.md § Performance):
 * `yes` floods an interactive bash; the controller sends Ctrl-C; the figure is the
 * time until the prompt is back at the controller, p50 and p99, with a phone-speed observer
 * attached (phone-observer.ts), against the same without it. Two sessions on one server, one
 * with the phone and one without, take turns trial by trial, so both arms see the same machine.
 *
 * A trial: the controller types `yes`, waits until FLOOD_LEAD_BYTES of it arrived (the flood is
 * in full swing and every buffer on the way is full), sends Ctrl-C and stops the clock when the
 * prompt (a PS1 of our own) shows up in its output. Before each trial of the phone's session the
 * phone is (re)attached if the server no longer counts it: a reader that slow is cut with 4408
 * during a flood, and comes back with its resume point, as a real phone does.
 */
import { performance } from "node:perf_hooks";
import { BENCH_COLS, BENCH_ROWS } from "./direct-pty.ts";
import { hubModuleMissing, hubUnavailable } from "./hub-probe.ts";
import { PHONE_BYTES_PER_SEC, PhoneObserver, sessionClients } from "./phone-observer.ts";
import { figure, type BenchContext, type BenchResult } from "./report.ts";
import { startServerProcess, type ServerProcess } from "./server-process.ts";
import { MIB, quantile, round } from "./stats.ts";
import { TerminalClient } from "./terminal-client.ts";

/** The fewest trials per arm whose p50 and p99 are worth reporting. */
const TRIALS = 20;
/** `--quick`: enough to see the mechanism work. */
const QUICK_TRIALS = 6;
/**
 * Flood the controller must have seen before Ctrl-C: far past the kernel's and the hub's buffers
 * (the PTY pauses at 1 MiB queued for the controller), yet early enough that the phone, behind
 * from the first byte, is still attached (it is cut only once 4 MiB queue on top of what the
 * kernel buffers for it).
 */
const FLOOD_LEAD_BYTES = 2 * MIB;
/** A prompt that takes longer than this means something is broken, not slow. */
const PROMPT_TIMEOUT_MS = 15_000;
/** Session start, the first prompt, and 2 MiB of flood, on a loaded machine. */
const STEP_TIMEOUT_MS = 30_000;
/** Our own prompt, so finding it needs no guess about bash's default one. */
const PROMPT = "wmx-bench-prompt$ ";
const SHELL = ["bash", "--norc", "--noprofile"];
/** Ctrl-C as the terminal sends it. */
const CTRL_C = "\x03";

/** Resolves when PROMPT appears in the output after `arm()` (across frame boundaries). */
class PromptWatcher {
  private tail = "";
  private armed = false;
  private found: (() => void) | null = null;
  foundAt = 0;

  constructor(client: TerminalClient) {
    client.onOutput((data) => {
      if (!this.armed) return;
      const text = this.tail + Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("latin1");
      if (text.includes(PROMPT)) {
        this.foundAt = performance.now();
        this.armed = false;
        this.found?.();
        return;
      }
      this.tail = text.slice(-(PROMPT.length - 1));
    });
  }

  arm(): Promise<void> {
    this.tail = "";
    this.armed = true;
    return new Promise((resolve) => (this.found = resolve));
  }
}

type Arm = { server: ServerProcess; sessionId: string; controller: TerminalClient; prompt: PromptWatcher; phone: PhoneObserver | null };

async function openArm(server: ServerProcess, withPhone: boolean, name: string): Promise<Arm> {
  const info = await server.createSession({ command: SHELL, env: { PS1: PROMPT }, cols: BENCH_COLS, rows: BENCH_ROWS });
  const controller = await TerminalClient.connect({ url: server.url, token: server.token, sessionId: info.id, client: `bench-${name}` });
  const prompt = new PromptWatcher(controller);
  // The first prompt may sit in the attach snapshot: ask for a fresh one.
  const ready = prompt.arm();
  controller.send("\r");
  await withDeadline(ready, STEP_TIMEOUT_MS, "first prompt");
  const phone = withPhone ? new PhoneObserver(server, info.id) : null;
  return { server, sessionId: info.id, controller, prompt, phone };
}

async function withDeadline(promise: Promise<void>, ms: number, what: string): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms)));
  try {
    await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

type Trial = { ms: number; phoneAttached: boolean | null };

async function trial(arm: Arm): Promise<Trial> {
  const { controller } = arm;
  await arm.phone?.ensureAttached(1);
  const before = controller.outputBytes;
  controller.send("yes\r");
  await controller.until(() => controller.outputBytes - before >= FLOOD_LEAD_BYTES, STEP_TIMEOUT_MS, "yes flood");
  // Asked in both arms, so both pause alike before Ctrl-C.
  const clients = await sessionClients(arm.server, arm.sessionId);
  const phoneAttached = arm.phone ? arm.phone.attached(clients, 1) : null;
  const back = arm.prompt.arm();
  const start = performance.now();
  controller.send(CTRL_C);
  await withDeadline(back, PROMPT_TIMEOUT_MS, "prompt after Ctrl-C");
  return { ms: arm.prompt.foundAt - start, phoneAttached };
}

async function closeArm(arm: Arm): Promise<void> {
  await arm.phone?.stop();
  await arm.controller.close();
  await arm.server.deleteSession(arm.sessionId);
}

const stats = (samples: number[]) => ({
  trials: samples.length,
  p50Ms: round(quantile(samples, 0.5), 1),
  p90Ms: round(quantile(samples, 0.9), 1),
  p99Ms: round(quantile(samples, 0.99), 1),
  maxMs: round(Math.max(...samples), 1),
  samplesMs: samples.map((s) => round(s, 1)),
});

export async function benchInterruptFlood(ctx: BenchContext): Promise<BenchResult> {
  const missing = hubModuleMissing();
  if (missing) return { skipped: missing };
  const trials = ctx.quick ? QUICK_TRIALS : TRIALS;
  const server = await startServerProcess({ cpuProfileDir: ctx.cpuProfileDir });
  try {
    const unavailable = await hubUnavailable(server);
    if (unavailable) return { skipped: unavailable };
    const alone = await openArm(server, false, "alone");
    const watched = await openArm(server, true, "watched");
    const aloneMs: number[] = [];
    const watchedMs: number[] = [];
    let phoneAttachedAtCtrlC = 0;
    try {
      for (let i = 0; i < trials; i++) {
        aloneMs.push((await trial(alone)).ms);
        const t = await trial(watched);
        watchedMs.push(t.ms);
        if (t.phoneAttached) phoneAttachedAtCtrlC++;
      }
    } finally {
      await closeArm(alone);
      await closeArm(watched);
    }
    const phone = watched.phone!;
    ctx.log(
      `interrupt-flood: with phone p50 ${quantile(watchedMs, 0.5).toFixed(1)} / p99 ${quantile(watchedMs, 0.99).toFixed(1)} ms, alone p50 ${quantile(aloneMs, 0.5).toFixed(1)} / p99 ${quantile(aloneMs, 0.99).toFixed(1)} ms; phone attached at ${phoneAttachedAtCtrlC}/${trials} Ctrl-Cs, ${phone.connections} connections`,
    );
    const detail = {
      withPhone: stats(watchedMs),
      alone: stats(aloneMs),
      phone: {
        bytesPerSec: PHONE_BYTES_PER_SEC,
        attachedAtCtrlC: phoneAttachedAtCtrlC,
        connections: phone.connections,
        outputBytes: phone.outputBytes,
      },
      floodLeadBytes: FLOOD_LEAD_BYTES,
      command: SHELL,
    };
    return [
      figure({
        id: "interrupt.p50",
        label: `Ctrl-C under a yes flood → prompt at the controller, p50, phone-speed observer attached (${trials} trials)`,
        unit: "ms",
        value: quantile(watchedMs, 0.5),
        baseline: quantile(aloneMs, 0.5),
        baselineLabel: "no observer",
        goal: { on: "value", op: "<=", target: 200, source: "docs/design.md § Performance (< 200 ms)" },
        detail,
      }),
      figure({
        id: "interrupt.p99",
        label: `Ctrl-C under a yes flood → prompt at the controller, p99, phone-speed observer attached (${trials} trials)`,
        unit: "ms",
        value: quantile(watchedMs, 0.99),
        baseline: quantile(aloneMs, 0.99),
        baselineLabel: "no observer",
      }),
    ];
  } finally {
    await server.stop();
  }
}
