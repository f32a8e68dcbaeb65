/**
 * Smoke scenario for HeadlessScreen outside vitest: run it with `bun` or with
 * `node --import tsx`. It prints one JSON line `{"ok":true,…}` and must then exit on
 * its own (an idle or finished screen must not keep the process alive).
 * headless-screen.test.ts runs it under both runtimes.
 */
import { HeadlessScreen } from "../../session/headless-screen.ts";

/** How long the worker may take to go away after the last screen is disposed. */
const WORKER_EXIT_DEADLINE_MS = 5_000;

function check(condition: boolean, what: string): void {
  if (!condition) throw new Error(`smoke check failed: ${what}`);
}

async function waitFor(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + WORKER_EXIT_DEADLINE_MS;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function main(): Promise<void> {
  const encoder = new TextEncoder();
  const a = new HeadlessScreen({ cols: 40, rows: 6 });
  const b = new HeadlessScreen({ cols: 40, rows: 6 });
  check(HeadlessScreen.workerCount() === 1, "both screens share one worker");

  const wide = encoder.encode("世界");
  a.write(encoder.encode("$ echo 世界\r\n"));
  a.write(wide.subarray(0, 1));
  await a.preview(); // forces the first byte of 世 into its own message to the worker
  a.write(wide.subarray(1));
  a.write(encoder.encode("\r\n$ \x1b[5;10H"));
  b.write(encoder.encode("only in b"));

  const read = await a.read();
  check(read.lines[0] === "$ echo 世界", `line 0 is ${JSON.stringify(read.lines[0])}`);
  check(read.lines[1] === "世界", `split UTF-8 came out as ${JSON.stringify(read.lines[1])}`);
  check(read.cursor.row === 4 && read.cursor.col === 9, `cursor ${JSON.stringify(read.cursor)}`);
  const preview = await b.preview();
  check(preview.length === 1 && preview[0] === "only in b", `preview of b ${JSON.stringify(preview)}`);
  const snapshot = await a.serialize();
  check(snapshot.includes("世界"), "serialize includes the screen text");

  a.dispose();
  b.dispose();
  await waitFor(() => HeadlessScreen.workerCount() === 0, "the worker to exit");
  const runtime = typeof (globalThis as { Bun?: unknown }).Bun === "undefined" ? "node" : "bun";
  console.log(JSON.stringify({ ok: true, runtime, lines: read.lines.slice(0, 2) }));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
