/**
 * The single worker thread shared by every HeadlessScreen of the process: started when
 * the first screen attaches, terminated WORKER_LINGER_MS after the last one detaches. One
 * worker for all sessions because each worker costs ~10 MB of RSS, while an idle session may
 * cost only a few MB.
 *
 * The worker is unref'd while nothing waits for it, so an idle screen never keeps a
 * process alive; it is ref'd while a request (serialize/preview/read) is outstanding,
 * so a script awaiting an answer is not cut short.
 */
import { Worker } from "node:worker_threads";
import type { FromWorker, ScreenReply, ScreenRequest, ToWorker } from "./headless-protocol.ts";
import { scheduleMemoryRelease } from "./memory-release.ts";

export type HeadlessScreenErrorCode =
  /** the screen was disposed before the request was answered */
  | "HEADLESS_SCREEN_DISPOSED"
  /** the worker thread failed or exited; the screen starts over blank on its next use */
  | "HEADLESS_WORKER_FAILED"
  /** the worker could not compute the answer */
  | "HEADLESS_REQUEST_FAILED";

export class HeadlessScreenError extends Error {
  readonly code: HeadlessScreenErrorCode;
  constructor(code: HeadlessScreenErrorCode, message: string) {
    super(message);
    this.name = "HeadlessScreenError";
    this.code = code;
  }
}

/** What the host calls back on the screen that owns an id. */
export interface ScreenClient {
  onParsed(bytes: number): void;
  onChanged(): void;
  /** The worker is gone: forget all in-flight accounting; attach again on next use. */
  onWorkerLost(): void;
}

type PendingRequest = {
  screen: number;
  resolve: (value: unknown) => void;
  reject: (error: HeadlessScreenError) => void;
};

const WORKER_URL = new URL("./headless-worker.js", import.meta.url);

/**
 * The nice value the worker thread lowers itself to (docs/design.md § Performance, the mirror
 * yields): the mirror is best effort, so on a busy machine the program, the main thread and the
 * clients' sockets get the cores first. A fresh session's first output costs the worker a burst
 * of parsing (PARSE_BURST_BYTES, filling 10 000 lines of scrollback at 45–90 ms of CPU per MiB),
 * which at the main thread's priority took half of a 2-core machine for the first second of a
 * `cat`. An idle core still runs it at once: on a quiet machine nothing parses later. Not 19: a
 * client waits for the mirror's snapshot after a gap, and at nice 19 (a weight of 15 against a
 * busy thread's 1024) two CPU-bound jobs beside the server held a snapshot of a wrapped ring back
 * for over 10 s; at 10 (110 against 1024) the worker still yields nine tenths of a shared core.
 */
export const HEADLESS_WORKER_NICE = 10;

/**
 * How long the worker outlives its last screen (docs/design.md § Where the CPU goes): a new
 * worker is a cold isolate that loads xterm and compiles its parser again, which made the first
 * seconds of a session created after the last one ended ~1.3× dearer in server CPU. Long enough
 * to cover closing one session and opening the next; short enough that an idle server gives the
 * worker's ~10 MB back soon.
 */
export const WORKER_LINGER_MS = 30_000;

/**
 * The worker's young generation (docs/design.md § Memory that comes back). V8 grows it to 32 MiB
 * under a flood and keeps it committed afterwards, so a worker lingering past its last screen held
 * ~25 MiB it no longer used. At 8 MiB the 10 MiB `cat` runs as fast (paired rounds) and a lingering
 * worker stays ~10 MiB above a fresh server once every session is deleted; 4 was no faster.
 */
export const WORKER_YOUNG_GENERATION_MB = 8;

/** What the worker is started with (headless-worker.js reads it as workerData). */
export type HeadlessWorkerData = { nice: number };

export class HeadlessWorkerHost {
  private static shared: HeadlessWorkerHost | null = null;
  /** workers started and not yet exited (a terminated worker counts until it is gone) */
  private static live = 0;
  /** WORKER_LINGER_MS, unless a test wants the worker gone sooner */
  static lingerMs = WORKER_LINGER_MS;

  private readonly worker: Worker;
  private readonly clients = new Map<number, ScreenClient>();
  private readonly requests = new Map<number, PendingRequest>();
  private nextScreen = 1;
  private nextRequest = 1;
  private closed = false;
  /** ends the worker once it has had no screen for lingerMs */
  private lingerTimer: ReturnType<typeof setTimeout> | null = null;

  /** Attaches a screen to the shared worker, starting it if needed; returns the screen id. */
  static attach(client: ScreenClient, open: { cols: number; rows: number; scrollback: number }): {
    host: HeadlessWorkerHost;
    screen: number;
  } {
    const host = (HeadlessWorkerHost.shared ??= new HeadlessWorkerHost());
    host.stopLingering();
    const screen = host.nextScreen++;
    host.clients.set(screen, client);
    host.post({ type: "open", screen, ...open });
    return { host, screen };
  }

  /** Worker threads of this process that are running or still shutting down. */
  static liveWorkers(): number {
    return HeadlessWorkerHost.live;
  }

  private constructor() {
    // execArgv: [] — the worker is plain JS and needs no loader; inheriting e.g. tsx's
    // --import would only cost start-up time and memory.
    const workerData: HeadlessWorkerData = { nice: HEADLESS_WORKER_NICE };
    this.worker = new Worker(WORKER_URL, {
      execArgv: [],
      workerData,
      resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
    });
    HeadlessWorkerHost.live++;
    this.worker.unref();
    this.worker.on("message", (message: FromWorker) => this.receive(message));
    this.worker.on("error", (error) => this.fail(`headless worker failed: ${String(error)}`));
    this.worker.on("exit", (code) => {
      HeadlessWorkerHost.live--;
      // The worker's heap and its thread's C arena are free now (docs/design.md § Memory that comes back).
      scheduleMemoryRelease();
      this.fail(`headless worker exited with code ${code}`);
    });
  }

  post(message: ToWorker, transfer?: ArrayBuffer[]): void {
    if (this.closed) return;
    this.worker.postMessage(message, transfer);
  }

  request<K extends ScreenRequest["kind"]>(
    screen: number,
    body: Extract<ScreenRequest, { kind: K }>,
  ): Promise<ScreenReply[K]> {
    if (this.closed) {
      return Promise.reject(new HeadlessScreenError("HEADLESS_WORKER_FAILED", "headless worker is gone"));
    }
    const request = this.nextRequest++;
    return new Promise<ScreenReply[K]>((resolve, reject) => {
      if (this.requests.size === 0) this.worker.ref();
      this.requests.set(request, { screen, resolve: resolve as (value: unknown) => void, reject });
      this.post({ type: "request", screen, request, body });
    });
  }

  /** Closes a screen; its unanswered requests are rejected; the worker ends lingerMs after the last one. */
  detach(screen: number): void {
    if (!this.clients.delete(screen)) return;
    for (const [id, pending] of this.requests) {
      if (pending.screen !== screen) continue;
      this.settle(id);
      pending.reject(new HeadlessScreenError("HEADLESS_SCREEN_DISPOSED", "screen disposed"));
    }
    this.post({ type: "close", screen });
    if (this.clients.size === 0) this.linger();
  }

  private linger(): void {
    this.stopLingering();
    const end = () => {
      this.lingerTimer = null;
      if (this.clients.size > 0 || this.closed) return;
      this.shutDown();
      void this.worker.terminate();
    };
    if (HeadlessWorkerHost.lingerMs <= 0) return end();
    this.lingerTimer = setTimeout(end, HeadlessWorkerHost.lingerMs);
    // An idle worker never keeps the process alive, nor does the wait to end it.
    this.lingerTimer.unref();
  }

  private stopLingering(): void {
    if (this.lingerTimer === null) return;
    clearTimeout(this.lingerTimer);
    this.lingerTimer = null;
  }

  private receive(message: FromWorker): void {
    switch (message.type) {
      case "parsed":
        for (const [screen, bytes] of message.counts) this.clients.get(screen)?.onParsed(bytes);
        return;
      case "changed":
        this.clients.get(message.screen)?.onChanged();
        return;
      case "released":
        scheduleMemoryRelease();
        return;
      case "reply": {
        const pending = this.requests.get(message.request);
        if (!pending) return;
        this.settle(message.request);
        if (message.ok) pending.resolve(message.value);
        else pending.reject(new HeadlessScreenError("HEADLESS_REQUEST_FAILED", message.message));
        return;
      }
    }
  }

  private settle(request: number): void {
    this.requests.delete(request);
    if (this.requests.size === 0 && !this.closed) this.worker.unref();
  }

  /** Stops accepting work; later screens get a new worker. */
  private shutDown(): void {
    this.stopLingering();
    this.closed = true;
    if (HeadlessWorkerHost.shared === this) HeadlessWorkerHost.shared = null;
  }

  private fail(reason: string): void {
    if (this.closed) return;
    this.shutDown();
    for (const pending of this.requests.values()) {
      pending.reject(new HeadlessScreenError("HEADLESS_WORKER_FAILED", reason));
    }
    this.requests.clear();
    for (const client of this.clients.values()) client.onWorkerLost();
    this.clients.clear();
    void this.worker.terminate();
  }
}
