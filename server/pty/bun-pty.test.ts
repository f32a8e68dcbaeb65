import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { spawnBunPty } from "./bun-pty.ts";

const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
const BUN = fileURLToPath(new URL("../../node_modules/.bin/bun", import.meta.url));
/** The smoke run takes well under a second; this only bounds a hang. */
const SMOKE_TIMEOUT_MS = 25_000;

type Observed = { text?: string; bytes: number; bytesAtExit: number; exit: { exitCode: number; signal: number | null }; elapsedMs: number };
type SmokeResult = {
  runtime: string;
  bunVersion: string | null;
  nodePtyLoaded: boolean;
  basic: Observed;
  interactive: Observed;
  environment: Observed & { cwd: string };
  bulk: Observed & { expected: number };
  burst: Observed & { expected: number };
  terminated: Observed & { graceMs: number };
};

function runSmoke(): Promise<SmokeResult> {
  if (!existsSync(BUN)) return Promise.reject(new Error(`no bun binary at ${BUN}: run npm install`));
  return new Promise((resolve, reject) => {
    execFile(BUN, ["server/testing/smoke/bun-pty-smoke.ts"], { cwd: REPO_ROOT, timeout: SMOKE_TIMEOUT_MS }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`bun-smoke failed: ${err.message}\n${stderr}`));
      const line = stdout.trim().split("\n").pop() ?? "";
      try {
        resolve(JSON.parse(line) as SmokeResult);
      } catch {
        reject(new Error(`bun-smoke printed no JSON result:\n${stdout}\n${stderr}`));
      }
    });
  });
}

// Bun is a devDependency: without it these tests fail (naming the fix) rather than skip the proof.
describe("PTY under Bun (bun-smoke.ts)", () => {
  let result: Promise<SmokeResult> | undefined;
  const smoke = () => (result ??= runSmoke());

  it("uses Bun's terminal API and never loads node-pty", async () => {
    const r = await smoke();
    expect(r.runtime).toBe("bun");
    expect(r.bunVersion).toMatch(/^\d+\.\d+\.\d+/);
    expect(r.nodePtyLoaded).toBe(false);
  });

  it("runs a command at the requested size and reports its exit status after its output", async () => {
    const { basic } = await smoke();
    expect(basic.text).toContain("bun-ok");
    expect(basic.text).toContain("30 90");
    expect(basic.exit).toEqual({ exitCode: 3, signal: null });
    expect(basic.bytesAtExit).toBe(basic.bytes);
  });

  it("resizes and writes bytes to the program", async () => {
    const { interactive } = await smoke();
    expect(interactive.text).toContain("40 100");
    expect(interactive.text).toContain("got:héllo");
    expect(interactive.exit.exitCode).toBe(0);
  });

  it("honours cwd and env and forces TERM", async () => {
    const { environment } = await smoke();
    expect(environment.text).toContain(environment.cwd);
    expect(environment.text).toContain("term=xterm-256color smoke=s-42");
  });

  it("delivers bulk output completely before the exit", async () => {
    const { bulk, burst } = await smoke();
    expect(bulk.bytesAtExit).toBe(bulk.expected);
    expect(bulk.exit.exitCode).toBe(0);
    expect(burst.bytesAtExit).toBe(burst.expected);
  });

  it("terminate escalates to SIGKILL when SIGHUP is ignored", async () => {
    const { terminated } = await smoke();
    expect(terminated.exit).toEqual({ exitCode: 137, signal: 9 });
    expect(terminated.elapsedMs).toBeGreaterThanOrEqual(terminated.graceMs);
  });
});

describe("spawnBunPty outside Bun", () => {
  it("refuses with PTY_SPAWN_FAILED instead of failing obscurely", () => {
    expect(() => spawnBunPty({ command: ["sh"], cwd: "/", env: {}, cols: 80, rows: 24 })).toThrow(
      expect.objectContaining({ code: "PTY_SPAWN_FAILED" }),
    );
  });
});
