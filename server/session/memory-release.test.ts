import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { spawnPty } from "../pty/index.ts";
import { waitFor } from "../testing/wait.ts";
import { memoryReleases, releaseFreedMemory } from "./memory-release.ts";
import { SessionRegistry } from "./registry.ts";

const MIB = 1024 * 1024;
/** Small buffers, as terminals' lines and PTY reads are: each is malloc'd in the allocating thread's arena. */
const BUFFER_BYTES = 2048;
const ALLOCATED_BYTES = 256 * MIB;

function rssBytes(): number {
  const kib = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync("/proc/self/status", "utf8"))?.[1];
  return Number(kib) * 1024;
}

/** A thread that fills its C arena with small buffers, touches them, and ends. */
async function allocateInThreadAndExit(): Promise<void> {
  const worker = new Worker(
    `const { parentPort } = require("node:worker_threads");
     const kept = [];
     for (let i = 0; i < ${ALLOCATED_BYTES / BUFFER_BYTES}; i++) kept.push(Buffer.alloc(${BUFFER_BYTES}, 1));
     parentPort.postMessage(kept.length);`,
    { eval: true },
  );
  await new Promise((resolve) => worker.once("message", resolve));
  await worker.terminate();
}

describe("memory that comes back (docs/design.md § Memory that comes back)", () => {
  it.runIf(process.platform === "linux" && !("Bun" in globalThis))("hands a finished thread's freed heap back to the OS", async () => {
    releaseFreedMemory();
    const before = rssBytes();
    await allocateInThreadAndExit();
    const kept = rssBytes() - before;
    // glibc keeps the dead thread's arena resident: this is what a session's end left behind.
    expect(kept).toBeGreaterThan(ALLOCATED_BYTES / 2);
    releaseFreedMemory();
    const after = rssBytes() - before;
    expect(after).toBeLessThan(kept / 4);
  });

  it("releases memory after a session is removed", async () => {
    const registry = new SessionRegistry({ shell: "/bin/bash", bufferBytes: 64 * 1024, spawnPty });
    try {
      const session = registry.create({ command: ["bash", "--norc", "--noprofile", "-c", "echo hi; sleep 30"], cwd: tmpdir(), cols: 80, rows: 24 });
      const releases = memoryReleases();
      await registry.remove(session.id);
      await waitFor(() => memoryReleases() > releases, { timeout: 20_000, message: "a release after the removal" });
    } finally {
      await registry.closeAll();
    }
  });
});
