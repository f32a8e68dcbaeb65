import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { waitFor } from "../testing/wait.ts";

const ROOT = join(import.meta.dirname, "..", "..");
/** Bun, a devDependency: `bun server/main.ts` runs the sources natively. */
export const BUN_BINARY = join(ROOT, "node_modules", ".bin", "bun");
/** A server process prints its listening line well within this, even on a loaded 2-core machine. */
const START_TIMEOUT_MS = 20_000;

export type ServerProcess = {
  proc: ChildProcess;
  url: string;
  token: string;
  stdout(): string;
  stderr(): string;
  /** the exit code (null when ended by a signal) */
  exit: Promise<number | null>;
  /** SIGTERM, then wait for the exit */
  stop(): Promise<number | null>;
};

/** The global token load tests give their server processes. */
export const LOAD_TEST_TOKEN = "load-test-token-0123456789";

/**
 * `node bin/webmux.js serve --port 0 …` (or `bun server/main.ts serve …`) in its own process, so it
 * has a core (and an RSS) of its own. With `token: null` the server generates (or reuses) the one
 * kept in the data dir.
 */
export async function startServerProcess(
  dataDir: string,
  args: string[] = [],
  token: string | null = LOAD_TEST_TOKEN,
  runtime: "node" | "bun" = "node",
): Promise<ServerProcess> {
  const tokenArgs = token === null ? [] : ["--token", token];
  const [runner, entry] = runtime === "bun" ? [BUN_BINARY, "server/main.ts"] : [process.execPath, "bin/webmux.js"];
  const proc = spawn(runner, [entry, "serve", "--port", "0", "--data-dir", dataDir, ...tokenArgs, ...args], {
    cwd: ROOT,
    // only the flags configure it: no WEBMUX_* variable of the test's own environment leaks in
    env: Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("WEBMUX_"))),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  proc.stdout!.on("data", (d) => (out += d));
  proc.stderr!.on("data", (d) => (err += d));
  const exit = new Promise<number | null>((resolve) => proc.once("exit", (code) => resolve(code)));
  let exited = false;
  void exit.then(() => (exited = true));
  const url = await waitFor(
    () => {
      if (exited) throw new Error(`server exited before listening: ${err}`);
      return /^listening on (http:\/\/[^\s]+)$/m.exec(out)?.[1];
    },
    { timeout: START_TIMEOUT_MS, message: "listening line" },
  ).catch((e: Error) => {
    proc.kill("SIGKILL");
    throw new Error(`${e.message}; stderr: ${err}`);
  });
  return {
    proc,
    url,
    token: token ?? (JSON.parse(readFileSync(join(dataDir, "global-token.json"), "utf8")) as { token: string }).token,
    stdout: () => out,
    stderr: () => err,
    exit,
    async stop() {
      if (!exited) proc.kill("SIGTERM");
      return exit;
    },
  };
}
