/**
 * Smoke scenario for the PTY layer under Bun: `npx bun server/testing/smoke/bun-pty-smoke.ts`.
 * Goes through ./index.ts exactly as the server does and prints one JSON line with what each
 * scenario observed; bun-pty.test.ts runs it and asserts on the result.
 */
import { createRequire } from "node:module";
import { realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { PTY_RUNTIME, spawnPty, terminate, type PtyExit, type PtySpawnOptions } from "../../pty/index.ts";

const BASH = ["bash", "--norc", "--noprofile"];
/** SIGKILL grace for the terminate scenario: short, it is about the escalation. */
const SMOKE_GRACE_MS = 300;
/** Bytes of the bulk scenario: many reads' worth, still quick. */
const BULK_BYTES = 1_000_000;
/** Deadline for a condition in a scenario. */
const CONDITION_TIMEOUT_MS = 10_000;

type Observed = { text: string; bytes: number; bytesAtExit: number; exit: PtyExit; elapsedMs: number };

function baseEnv(): Record<string, string> {
  return Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));
}

/** Spawn, optionally drive the program, and collect its output up to the reported exit. */
async function observe(
  command: string[],
  options: Partial<PtySpawnOptions> = {},
  drive?: (pty: ReturnType<typeof spawnPty>, text: () => string) => Promise<unknown> | void,
): Promise<Observed> {
  const started = Date.now();
  const pty = spawnPty({ command, cwd: process.cwd(), env: baseEnv(), cols: 90, rows: 30, ...options });
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  pty.onData((chunk) => {
    chunks.push(chunk);
    bytes += chunk.byteLength;
  });
  const exited = new Promise<{ exit: PtyExit; bytesAtExit: number }>((resolve) =>
    pty.onExit((exit) => resolve({ exit, bytesAtExit: bytes })),
  );
  const text = () => Buffer.concat(chunks).toString("utf8");
  const result = await withTimeout((async () => {
    await drive?.(pty, text);
    return exited;
  })(), `${command.join(" ")}`).catch((err: unknown) => {
    pty.kill("SIGKILL");
    throw err;
  });
  return { text: text(), bytes, ...result, elapsedMs: Date.now() - started };
}

async function withTimeout<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), CONDITION_TIMEOUT_MS);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 10));
}

const basic = await observe([...BASH, "-c", "echo bun-ok; stty size; exit 3"]);

const interactive = await observe([...BASH, "-c", 'read line; stty size; echo "got:$line"'], {}, (pty) => {
  pty.resize(100, 40);
  pty.write(new TextEncoder().encode("héllo\n"));
});

const cwd = realpathSync(tmpdir());
const environment = await observe(["sh", "-c", 'pwd; echo "term=$TERM smoke=$WEBMUX_SMOKE"'], {
  cwd,
  env: { ...baseEnv(), WEBMUX_SMOKE: "s-42", TERM: "dumb" },
});

const bulk = await observe(["sh", "-c", `head -c ${BULK_BYTES} /dev/zero | tr '\\0' x`]);
// The writer is the session leader itself: the terminal closes the instant the last byte is written.
const burst = await observe([...BASH, "-c", `exec tr '\\0' x < <(head -c ${BULK_BYTES} /dev/zero)`]);

const terminated = await observe([...BASH, "-c", 'trap "" HUP; echo ready; sleep 100'], {}, async (pty, text) => {
  await until(() => text().includes("ready"));
  await terminate(pty, SMOKE_GRACE_MS);
});

const nodePtyLoaded = Object.keys(createRequire(import.meta.url).cache ?? {}).some((path) => path.includes("node-pty"));

console.log(
  JSON.stringify({
    runtime: PTY_RUNTIME,
    bunVersion: process.versions.bun ?? null,
    nodePtyLoaded,
    basic,
    interactive,
    environment: { ...environment, cwd },
    bulk: { ...bulk, text: undefined, expected: BULK_BYTES },
    burst: { ...burst, text: undefined, expected: BULK_BYTES },
    terminated: { ...terminated, graceMs: SMOKE_GRACE_MS },
  }),
);
