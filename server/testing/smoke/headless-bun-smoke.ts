/**
 * Smoke scenario for HeadlessScreen outside vitest: run it with `bun` or with
 * `node --import tsx`. It prints one JSON line `{"ok":true,…}` and must then exit on
 * its own (an idle or finished screen must not keep the process alive, nor must the worker
 * that lingers after the last screen, nor the timer that will end it).
 * headless-screen.test.ts runs it under both runtimes.
 */
import { HeadlessScreen } from "../../session/headless-screen.ts";

/** Upper bound for any awaited condition here. */
const CONDITION_DEADLINE_MS = 5_000;

function check(condition: boolean, what: string): void {
  if (!condition) throw new Error(`smoke check failed: ${what}`);
}

async function waitFor(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + CONDITION_DEADLINE_MS;
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
  // The worker lingers for the next screen, which gets the same warm worker.
  check(HeadlessScreen.workerCount() === 1, "the worker lingers after the last screen");
  const c = new HeadlessScreen({ cols: 40, rows: 6 });
  c.write(encoder.encode("in c"));
  const previewOfC = await c.preview();
  check(previewOfC[0] === "in c", `preview of c ${JSON.stringify(previewOfC)}`);
  check(HeadlessScreen.workerCount() === 1, "a screen opened while the worker lingers reuses it");
  c.dispose();
  const runtime = typeof (globalThis as { Bun?: unknown }).Bun === "undefined" ? "node" : "bun";
  console.log(JSON.stringify({ ok: true, runtime, lines: read.lines.slice(0, 2) }));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
