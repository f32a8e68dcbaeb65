import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { waitFor } from "../testing/wait.ts";
import { PAUSED_EXIT_HOLD_MS, spawnNodePty } from "./node-pty.ts";
import type { PtyExit, PtyProcess, PtySpawnOptions } from "./pty.ts";
import { terminate } from "./terminate.ts";
import { processAlive } from "../testing/process-alive.ts";

const BASH = ["bash", "--norc", "--noprofile"];
/** How long the consumer stays paused after the program is gone: 5x node-pty's 200 ms close timeout. */
const PAUSED_AFTER_EXIT_MS = 1_000;
/** A progress value unchanged for this long means the program is blocked (it advances every few µs when not). */
const STALL_WINDOW_MS = 300;
/** SIGKILL grace for the terminate test: short, the test is about the escalation, not its length. */
const TEST_GRACE_MS = 300;

const running = new Set<PtyProcess>();
const tempDirs: string[] = [];

afterEach(async () => {
  for (const pty of running) {
    pty.resume();
    pty.kill("SIGKILL");
  }
  await Promise.all([...running].map((pty) => pty.exited));
  running.clear();
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function baseEnv(): Record<string, string> {
  return Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));
}

function tempDir(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "webmux-pty-")));
  tempDirs.push(dir);
  return dir;
}

/** Spawn and record everything: chunks as delivered, and how many bytes had arrived when onExit fired. */
function start(command: string[], options: Partial<PtySpawnOptions> = {}) {
  const pty = spawnNodePty({ command, cwd: process.cwd(), env: baseEnv(), cols: 80, rows: 24, ...options });
  running.add(pty);
  const chunks: Buffer[] = [];
  let received = 0;
  pty.onData((chunk) => {
    chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    received += chunk.byteLength;
  });
  let exitReport: { exit: PtyExit; bytesAtExit: number } | null = null;
  const exited = new Promise<{ exit: PtyExit; bytesAtExit: number }>((resolve) =>
    pty.onExit((exit) => resolve((exitReport = { exit, bytesAtExit: received }))),
  );
  return {
    pty,
    chunks,
    exited,
    received: () => received,
    hasExited: () => exitReport !== null,
    bytes: () => Buffer.concat(chunks),
    text: () => Buffer.concat(chunks).toString("utf8"),
  };
}

function count(bytes: Buffer, byte: number): number {
  let n = 0;
  for (const b of bytes) if (b === byte) n++;
  return n;
}

describe("spawnNodePty", () => {
  it("runs a command and reports its output and exit 0", async () => {
    const run = start([...BASH, "-c", "echo hello"]);
    const { exit } = await run.exited;
    expect(run.text()).toContain("hello");
    expect(exit).toEqual({ exitCode: 0, signal: null });
    await expect(run.pty.exited).resolves.toEqual(exit);
  });

  it("reports a non-zero exit status", async () => {
    const { exit } = await start(["sh", "-c", "exit 5"]).exited;
    expect(exit).toEqual({ exitCode: 5, signal: null });
  });

  it("reports 128 + signal when a signal ends the program", async () => {
    const { exit } = await start(["sh", "-c", "kill -TERM $$"]).exited;
    expect(exit).toEqual({ exitCode: 128 + 15, signal: 15 });
  });

  it("resizes the terminal the program sees", async () => {
    const run = start([...BASH, "-c", "read; stty size"]);
    run.pty.resize(100, 40);
    run.pty.write("\n");
    await run.exited;
    expect(run.text()).toContain("40 100");
  });

  it("starts in the requested cwd with the requested env, TERM forced, COLUMNS/LINES dropped", async () => {
    const cwd = tempDir();
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", WEBMUX_TEST_VAR: "v-123", TERM: "dumb", COLUMNS: "5" };
    const run = start(["sh", "-c", 'pwd; echo "var=$WEBMUX_TEST_VAR term=$TERM cols=${COLUMNS-unset}"; stty size'], {
      cwd,
      env,
      cols: 91,
      rows: 33,
    });
    await run.exited;
    expect(run.text()).toContain(cwd);
    expect(run.text()).toContain("var=v-123 term=xterm-256color cols=unset");
    expect(run.text()).toContain("33 91");
  });

  it("writes bytes and strings to the program", async () => {
    const run = start([...BASH, "-c", 'read a; read b; echo "got:$a|$b"']);
    run.pty.write(new TextEncoder().encode("héllo\n"));
    run.pty.write("wörld\n");
    await run.exited;
    expect(run.text()).toContain("got:héllo|wörld");
  });

  it("delivers a 4 MiB paste to a program that starts reading late, byte for byte, and drained() says when it is all in", async () => {
    const dir = tempDir();
    const out = join(dir, "pasted");
    const paste = randomBytes(4 << 20);
    // Raw: every byte reaches the program unchanged. The kernel's buffer fills during the sleep.
    const run = start([...BASH, "-c", `stty raw -echo; echo READY; sleep 0.3; head -c ${paste.length} > ${out}`]);
    await waitFor(() => run.text().includes("READY"), { message: "the program is raw" });
    run.pty.write(paste);
    await run.pty.drained();
    await run.exited;
    expect(createHash("sha1").update(readFileSync(out)).digest("hex")).toBe(createHash("sha1").update(paste).digest("hex"));
  });

  it("drops input still queued when its program ends, without a write error, and drained() settles", async () => {
    const errors = vi.spyOn(console, "error");
    try {
      // The program never reads: most of the paste waits in the server when it exits. (Raw, so the
      // kernel keeps refusing input to the end instead of discarding it as a full line.)
      const run = start([...BASH, "-c", "stty raw -echo; echo READY; sleep 0.3"]);
      await waitFor(() => run.text().includes("READY"), { message: "the program started" });
      run.pty.write(Buffer.alloc(1 << 20, 0x61));
      await run.exited;
      await run.pty.drained();
      // Thread-pool retries of a queued write used to meet the closed descriptor here (EBADF).
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(errors.mock.calls.map((call) => String(call[0]))).not.toContainEqual(expect.stringContaining("pty write error"));
    } finally {
      errors.mockRestore();
    }
  });

  it("delivers UTF-8 byte-exact across chunk boundaries", async () => {
    const unit = "héllo 世界 🎉";
    const repeats = 3_000;
    const run = start([...BASH, "-c", `for ((i = 0; i < ${repeats}; i++)); do printf '%s' '${unit}'; done`]);
    await run.exited;
    expect(run.chunks.length).toBeGreaterThan(1);
    expect(run.bytes().equals(Buffer.from(unit.repeat(repeats), "utf8"))).toBe(true);
  });

  it("delivers 5 MB of output completely before onExit", async () => {
    const size = 5_000_000;
    const run = start(["sh", "-c", `head -c ${size} /dev/zero | tr '\\0' x`]);
    const { exit, bytesAtExit } = await run.exited;
    expect(exit.exitCode).toBe(0);
    expect(bytesAtExit).toBe(size);
    expect(count(run.bytes(), 0x78)).toBe(size);
  });

  it("delivers the whole tail when the program exits right after a burst (no early EOF)", async () => {
    // bash becomes the writer itself, so the terminal closes the moment the last byte is
    // written: the shape in which plain node-pty lost 2-10 KB nearly every run.
    const size = 2_000_000;
    for (let attempt = 0; attempt < 4; attempt++) {
      const run = start([...BASH, "-c", `exec tr '\\0' x < <(head -c ${size} /dev/zero)`]);
      const { bytesAtExit } = await run.exited;
      expect(bytesAtExit).toBe(size);
    }
  });

  it("pause blocks the program and resume lets it continue", async () => {
    const dir = tempDir();
    const progress = join(dir, "progress");
    const run = start([...BASH, "-c", "n=0; while :; do printf '%0100d\\n' $n; n=$((n+1)); echo $n > progress; done"], { cwd: dir });
    const readProgress = () => Number(readFileSync(progress, "utf8").trim() || 0);
    await waitFor(() => run.received() > 0 && readProgress() > 0, { message: "program running" });

    run.pty.pause();
    const receivedAtPause = run.received();
    let last = readProgress();
    let stableSince = Date.now();
    const stalledAt = await waitFor(
      () => {
        const now = readProgress();
        if (now !== last) [last, stableSince] = [now, Date.now()];
        return Date.now() - stableSince >= STALL_WINDOW_MS ? now : 0;
      },
      { message: "program blocked by the paused PTY" },
    );
    expect(run.received()).toBe(receivedAtPause);

    run.pty.resume();
    await waitFor(() => run.received() > receivedAtPause && readProgress() > stalledAt, {
      message: "output and progress after resume",
    });
  });

  it("keeps output the program wrote just before exiting while paused, and reports the exit after it", async () => {
    const tail = 6_000; // more than one read returns (4095), less than a paused terminal holds (~8 KB)
    const run = start([...BASH, "-c", `read; head -c ${tail} /dev/zero | tr '\\0' y; exit 4`]);
    run.pty.pause();
    run.pty.write("\n");
    await waitFor(() => !processAlive(run.pty.pid), { message: "program gone" });
    await new Promise((resolve) => setTimeout(resolve, PAUSED_AFTER_EXIT_MS)); // the scenario: a consumer that stays backed up
    expect(run.hasExited()).toBe(false);

    run.pty.resume();
    const { exit, bytesAtExit } = await run.exited;
    expect(exit.exitCode).toBe(4);
    expect(count(run.bytes(), 0x79)).toBe(tail);
    expect(bytesAtExit).toBe(run.received());
  });

  it("reports the exit and the held output after PAUSED_EXIT_HOLD_MS when the session never resumes", async () => {
    const run = start([...BASH, "-c", "read; printf tail-bytes; exit 6"]);
    run.pty.pause();
    run.pty.write("\n");
    const started = Date.now();
    const { exit } = await run.exited;
    expect(exit.exitCode).toBe(6);
    expect(run.text()).toContain("tail-bytes");
    expect(Date.now() - started).toBeGreaterThanOrEqual(PAUSED_EXIT_HOLD_MS);
  });

  it("reports the exit even when a background process keeps the terminal open", async () => {
    const run = start(["sh", "-c", "sleep 30 & echo started; exit 2"]);
    const { exit } = await run.exited;
    expect(exit.exitCode).toBe(2);
    expect(run.text()).toContain("started");
  });

  it("terminate escalates to SIGKILL when SIGHUP is ignored, and resolves with the exit", async () => {
    const run = start([...BASH, "-c", 'trap "" HUP; echo ready; sleep 100']);
    await waitFor(() => run.text().includes("ready"), { message: "trap installed" });
    const started = Date.now();
    const exit = await terminate(run.pty, TEST_GRACE_MS);
    expect(exit).toEqual({ exitCode: 128 + 9, signal: 9 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(TEST_GRACE_MS);
    expect(run.hasExited()).toBe(true);
  });

  it("terminate ends a shell that honours SIGHUP without escalating", async () => {
    const run = start([...BASH, "-c", "echo ready; sleep 100"]);
    await waitFor(() => run.text().includes("ready"), { message: "shell running" });
    const exit = await terminate(run.pty, 60_000);
    expect(exit.signal).toBe(1);
  });

  it("leaves no PTY master to processes started after it, in a PTY or with child_process (an agent)", async () => {
    start([...BASH, "-c", "sleep 30"]);
    start([...BASH, "-c", "sleep 30"]);
    const lister = start([...BASH, "-c", "ls -l /proc/$$/fd"]);
    await lister.exited;
    expect(lister.text()).not.toContain("/dev/ptmx");
    // child_process does not close descriptors in the child: only close-on-exec keeps them out,
    // also the master of the PTY spawned just before.
    start([...BASH, "-c", "sleep 30"]);
    expect(execFileSync("ls", ["-l", "/proc/self/fd"], { encoding: "utf8" })).not.toContain("/dev/ptmx");
  });

  it("refuses a missing command or cwd with a stable code, spawning nothing", () => {
    expect(() => spawnNodePty({ command: ["webmux-no-such-command"], cwd: "/", env: baseEnv(), cols: 80, rows: 24 })).toThrow(
      expect.objectContaining({ code: "PTY_COMMAND_NOT_FOUND" }),
    );
    expect(() => spawnNodePty({ command: ["sh"], cwd: "/webmux/no/such/dir", env: baseEnv(), cols: 80, rows: 24 })).toThrow(
      expect.objectContaining({ code: "PTY_CWD_NOT_FOUND" }),
    );
    expect(() => spawnNodePty({ command: [], cwd: "/", env: baseEnv(), cols: 80, rows: 24 })).toThrow(
      expect.objectContaining({ code: "PTY_BAD_COMMAND" }),
    );
  });
});
