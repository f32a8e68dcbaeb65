import { execFileSync } from "node:child_process";
import { closeSync, constants, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { waitFor } from "../testing/wait.ts";
import { ECHO_POLL_BUDGET_MS, ECHO_POLL_MAX_INPUT_BYTES, EchoPollBudget, EchoPoller, echoPollStats } from "./echo-poller.ts";
import { spawnNodePty } from "./node-pty.ts";
import type { PtyProcess } from "./pty.ts";

function baseEnv(): Record<string, string> {
  return Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));
}

function start(script: string): { pty: PtyProcess; output: () => string } {
  const pty = spawnNodePty({ command: ["sh", "-c", script], cwd: process.cwd(), env: baseEnv(), cols: 80, rows: 24 });
  const chunks: Buffer[] = [];
  pty.onData((chunk) => void chunks.push(Buffer.from(chunk)));
  return { pty, output: () => Buffer.concat(chunks).toString("latin1") };
}

describe("EchoPollBudget", () => {
  it("refills at its share of the clock and never holds more than one window's worth", () => {
    let now = 0;
    const budget = new EchoPollBudget(0.02, 1_000, () => now);
    expect(budget.mayPoll()).toBe(true);
    budget.spend(20); // the whole window's 20 ms at once: a flood of keys that never echo
    expect(budget.mayPoll()).toBe(false);
    now += 100; // 2 ms back
    expect(budget.mayPoll()).toBe(true);
    budget.spend(ECHO_POLL_BUDGET_MS);
    expect(budget.mayPoll()).toBe(true);
    budget.spend(1.5);
    expect(budget.mayPoll()).toBe(false);
    now += 60_000; // a long idle does not bank more than one window
    expect(budget.mayPoll()).toBe(true);
    budget.spend(20);
    expect(budget.mayPoll()).toBe(false);
  });
});

/** A FIFO opened non-blocking at both ends: a master whose "echo" the test writes itself. */
function makeFifo(): { readFd: number; writeFd: number; close(): void } {
  const dir = mkdtempSync(join(tmpdir(), "webmux-echo-"));
  const path = join(dir, "fifo");
  execFileSync("mkfifo", [path]);
  const readFd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  const writeFd = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
  return {
    readFd,
    writeFd,
    close() {
      closeSync(readFd);
      closeSync(writeFd);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const nextCheckPhase = () => new Promise((resolve) => setImmediate(resolve));

describe("EchoPoller", () => {
  it("reads an echo that is there within its budget, once, and leaves bigger writes alone", async () => {
    const fifo = makeFifo();
    try {
      const delivered: string[] = [];
      let readable = true;
      const poller = new EchoPoller(
        { fd: fifo.readFd, readable: () => readable, deliver: (chunk) => void delivered.push(chunk.toString()) },
        new EchoPollBudget(),
      );
      writeSync(fifo.writeFd, "ab");
      poller.afterWrite(1);
      await nextCheckPhase();
      expect(delivered).toEqual(["ab"]);

      // A paste is not waited on; nor is anything while reading directly would reorder output.
      writeSync(fifo.writeFd, "cd");
      poller.afterWrite(ECHO_POLL_MAX_INPUT_BYTES + 1);
      await nextCheckPhase();
      readable = false;
      poller.afterWrite(1);
      await nextCheckPhase();
      expect(delivered).toEqual(["ab"]);

      // Output that came through the stream since the write means the echo is already on its way.
      readable = true;
      poller.afterWrite(1);
      poller.noteData();
      await nextCheckPhase();
      expect(delivered).toEqual(["ab"]);
      poller.afterWrite(1);
      await nextCheckPhase();
      expect(delivered).toEqual(["ab", "cd"]);
    } finally {
      fifo.close();
    }
  });

  it("gives up after its budget when nothing echoes, and stops polling once the shared budget is spent", async () => {
    const fifo = makeFifo();
    try {
      let now = 0;
      const budget = new EchoPollBudget(0.02, 1_000, () => now);
      const poller = new EchoPoller({ fd: fifo.readFd, readable: () => true, deliver: () => {} }, budget);
      const before = echoPollStats();
      const started = performance.now();
      poller.afterWrite(1);
      await nextCheckPhase();
      const waited = performance.now() - started;
      expect(waited).toBeGreaterThanOrEqual(ECHO_POLL_BUDGET_MS);
      expect(echoPollStats().polls).toBe(before.polls + 1);
      expect(echoPollStats().hits).toBe(before.hits);
      budget.spend(20);
      poller.afterWrite(1);
      await nextCheckPhase();
      expect(echoPollStats().polls).toBe(before.polls + 1);
    } finally {
      fifo.close();
    }
  });
});

describe("EchoPoller on node-pty", () => {
  it("reads keystroke echoes straight from the master, every byte once and in order", async () => {
    const { pty, output } = start("stty raw -echo; printf R; exec cat");
    try {
      await waitFor(() => output().includes("R"), { message: "cat ready" });
      const before = echoPollStats();
      let expected = "R";
      for (let i = 0; i < 50; i++) {
        const key = String.fromCharCode(97 + (i % 26));
        expected += key;
        pty.write(key);
        await waitFor(() => output().length === expected.length, { message: `echo of key ${i}` });
      }
      expect(output()).toBe(expected);
      // Whether a given echo was read directly depends on the machine's timing (the unit tests
      // above pin that down); that it was waited on at all shows the poller is wired in.
      expect(echoPollStats().polls).toBeGreaterThan(before.polls);
    } finally {
      pty.kill("SIGKILL");
      await pty.exited;
    }
  });

  it("keeps a flood's bytes in order while keystrokes poll, pauses included", async () => {
    // seq prints while keys arrive (it never reads them): the poller and the stream both read.
    const { pty, output } = start("stty -echo; printf 'GO\\n'; seq 1 200000; printf END");
    try {
      // Keys typed before `stty -echo` ran would be echoed into the numbers.
      await waitFor(() => output().includes("GO"), { message: "echo off" });
      let paused = false;
      for (let i = 0; !output().includes("END"); i++) {
        pty.write("k");
        if (i % 7 === 0) {
          paused = !paused;
          if (paused) pty.pause();
          else pty.resume();
        }
        await new Promise((resolve) => setImmediate(resolve));
        if (i > 2_000_000) throw new Error("seq never finished");
      }
      pty.resume();
      const lines = output().replace(/\r/g, "").split("GO\n")[1]!.split("\n");
      const numbers = lines.slice(0, 200000).map(Number);
      expect(numbers.length).toBe(200000);
      expect(numbers.every((n, i) => n === i + 1)).toBe(true);
      expect(lines[200000]).toBe("END");
    } finally {
      pty.kill("SIGKILL");
      await pty.exited;
    }
  });
});
