/**
 * The same server under Bun (`bun server/main.ts serve`, as server/bun-server.test.ts starts it),
 * for the figures that compare the runtimes. Just enough of ServerProcess for them: its URL and
 * token, sessions, stop. A missing Bun (a devDependency) returns why instead.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { SessionInfo } from "../server/contract/types.ts";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const BUN = join(REPO, "node_modules", ".bin", "bun");
/** A fixed bench-only token; the server listens on loopback only. */
const BENCH_TOKEN = "bench-token-0123456789abcdef";
const READY_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 10_000;

export type BunServer = {
  url: string;
  token: string;
  pid: number;
  createSession(body: { command: string[]; cols?: number; rows?: number }): Promise<SessionInfo>;
  deleteSession(id: string): Promise<void>;
  stop(): Promise<void>;
};

export async function startBunServer(): Promise<BunServer | string> {
  if (!existsSync(BUN)) return `bun not installed (${BUN})`;
  const dataDir = mkdtempSync(join(tmpdir(), "webmux-bench-bun-"));
  const child: ChildProcess = spawn(BUN, ["server/main.ts", "serve", "--stop-sessions-on-exit", "--port", "0", "--data-dir", dataDir, "--token", BENCH_TOKEN], {
    cwd: REPO,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let out = "";
  child.stderr!.resume();
  const url = await new Promise<string | null>((resolve) => {
    const timer = setTimeout(() => resolve(null), READY_TIMEOUT_MS);
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString("utf8");
      const found = /listening on (http:\/\/\S+)/.exec(out)?.[1];
      if (found) {
        clearTimeout(timer);
        resolve(found);
      }
    });
    void exited.then(() => resolve(null));
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  if (!url) {
    await stop();
    return "the server did not start under bun";
  }
  const base = url.replace(/\/$/, "");
  const headers = { authorization: `Bearer ${BENCH_TOKEN}`, "content-type": "application/json" };
  return {
    url: base,
    token: BENCH_TOKEN,
    pid: child.pid!,
    async createSession(body) {
      const res = await fetch(`${base}/api/sessions`, { method: "POST", headers, body: JSON.stringify(body) });
      if (res.status !== 201) throw new Error(`create session under bun: ${res.status} ${await res.text()}`);
      return (await res.json()) as SessionInfo;
    },
    async deleteSession(id) {
      const res = await fetch(`${base}/api/sessions/${id}`, { method: "DELETE", headers });
      await res.body?.cancel();
    },
    stop,
  };
}
