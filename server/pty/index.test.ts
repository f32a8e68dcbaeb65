import { afterEach, describe, expect, it, vi } from "vitest";
import { PTY_RUNTIME, spawnPty, TERMINATE_GRACE_MS, terminate } from "./index.ts";
import { spawnNodePty } from "./node-pty.ts";
import type { PtyExit, PtyProcess } from "./pty.ts";

/** A PtyProcess that records signals and exits when told to. */
function fakePty(exitOn: NodeJS.Signals[]): PtyProcess & { signals: NodeJS.Signals[] } {
  let settle!: (exit: PtyExit) => void;
  const exited = new Promise<PtyExit>((resolve) => (settle = resolve));
  const signals: NodeJS.Signals[] = [];
  return {
    pid: 4242,
    exited,
    signals,
    onData() {},
    onExit(listener) {
      void exited.then(listener);
    },
    write() {},
    drained: () => Promise.resolve(),
    resize() {},
    pause() {},
    resume() {},
    kill(signal = "SIGHUP") {
      signals.push(signal);
      if (exitOn.includes(signal)) settle({ exitCode: 128 + (signal === "SIGKILL" ? 9 : 1), signal: signal === "SIGKILL" ? 9 : 1 });
    },
  };
}

afterEach(() => vi.useRealTimers());

describe("spawnPty", () => {
  it("is node-pty under Node", () => {
    expect(PTY_RUNTIME).toBe("node");
    expect(spawnPty).toBe(spawnNodePty);
  });
});

describe("terminate", () => {
  it("waits the delete's grace of 3 s by default", () => {
    expect(TERMINATE_GRACE_MS).toBe(3_000);
  });

  it("sends SIGHUP and nothing else when the program ends on it", async () => {
    vi.useFakeTimers();
    const pty = fakePty(["SIGHUP"]);
    const exit = await terminate(pty, 1_000);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(pty.signals).toEqual(["SIGHUP"]);
    expect(exit.signal).toBe(1);
  });

  it("escalates to SIGKILL exactly when the grace is over", async () => {
    vi.useFakeTimers();
    const pty = fakePty(["SIGKILL"]);
    const done = terminate(pty, 1_000);
    await vi.advanceTimersByTimeAsync(999);
    expect(pty.signals).toEqual(["SIGHUP"]);
    await vi.advanceTimersByTimeAsync(1);
    expect(pty.signals).toEqual(["SIGHUP", "SIGKILL"]);
    await expect(done).resolves.toEqual({ exitCode: 137, signal: 9 });
  });
});
