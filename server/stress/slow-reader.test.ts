import type { Socket } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CloseCode } from "../contract/protocol.ts";
import type { SessionInfo } from "../contract/types.ts";
import { TerminalClient } from "../testing/terminal-client.ts";
import { waitFor } from "../testing/wait.ts";
import { fetchDebugStats } from "../testing/debug-stats.ts";
import { startServerProcess, type ServerProcess } from "../testing/webmux-process.ts";
import { assertSameBytes, numberedLines, PERL_OUT, receivedFromStart } from "../testing/stream-check.ts";

/** Lines of the warm-up run (~10 MB): the fast clients' speed with nobody slow attached. */
const BASELINE_LINES = 750_000;
/** Lines of the flood (~50 MB, docs/design.md § Hardening and limits) printed while one reader has stopped reading. */
const FLOOD_LINES = 3_700_000;
/** A ring that holds the whole flood, so the slow reader can resume with append from anywhere. */
const RING_BYTES = 96 * 1024 * 1024;
/**
 * The fast readers may lose at most this share of their warm-up speed while the slow one is
 * attached and being cut (a stalled reader would make them wait for it: a ratio near 0).
 */
const MIN_SPEED_RATIO = 0.4;
/** 50 MB must get through within this even on a loaded 2-core machine. */
const FLOOD_TIMEOUT_MS = 40_000;

/**
 * Echo off; print the warm-up after the first line typed, the flood after the second, then exit.
 * Lines go out 10 000 per write(2) (perl's tty line buffering would make one write per line, and
 * perl, not webmux, the bottleneck).
 */
const GENERATOR = `stty -echo; exec perl -e '${PERL_OUT} sub run { my ($t,$n)=@_; for (my $i=1; $i<=$n; $i+=10000) { my $e=$i+9999; $e=$n if $e>$n; out(join "", map {"$t-$_\\n"} $i..$e) } } <STDIN>; run("a",${BASELINE_LINES}); <STDIN>; run("b",${FLOOD_LINES}); out("END\\n")'`;

let server: ServerProcess;
let dataDir: string;
beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "webmux-slow-"));
  server = await startServerProcess(dataDir, ["--buffer-bytes", String(RING_BYTES)]);
});
afterAll(async () => {
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const connect = (id: string, options: ConstructorParameters<typeof TerminalClient>[2] = {}) =>
  TerminalClient.connect(server.url, id, { token: server.token, ...options });

describe("a reader that stops reading during a 50 MB flood", () => {
  it("is cut with 4408 while the others keep their speed, then resumes to exactly the right bytes", async () => {
    const created = await fetch(`${server.url}/api/sessions`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
      body: JSON.stringify({ command: ["sh", "-c", GENERATOR] }),
    });
    const s = (await created.json()) as SessionInfo;
    const warmup = numberedLines("a", BASELINE_LINES);
    const expected = Buffer.concat([warmup, numberedLines("b", FLOOD_LINES, "END\r\n")]);

    const controller = await connect(s.id, { client: "fast-controller" });
    const observer = await connect(s.id, { client: "fast-observer" });
    await waitFor(() => controller.status && observer.status, { message: "both attached" });

    let t0 = Date.now();
    controller.type("\r");
    await waitFor(() => controller.offset >= warmup.length && observer.offset >= warmup.length, { timeout: FLOOD_TIMEOUT_MS, message: "warm-up through" });
    const baselineRate = warmup.length / (Date.now() - t0);

    const slow = await connect(s.id, { client: "slow-phone" });
    await waitFor(() => slow.status, { message: "slow attached" });
    const slowSocket = (slow.ws as unknown as { _socket: Socket })._socket;
    slowSocket.pause();

    t0 = Date.now();
    controller.type("\r");
    let cutAt = -1;
    const cut = waitFor(async () => (await fetchDebugStats(server.url, server.token)).terminalConnections === 2, { timeout: FLOOD_TIMEOUT_MS, message: "slow reader cut" }).then(
      () => (cutAt = Math.max(controller.offset, observer.offset)),
    );
    // Both fast readers get everything while the slow one still reads nothing: it cannot stall them.
    for (const c of [controller, observer]) expect(await c.closed()).toBe(CloseCode.EXITED);
    const floodRate = (expected.length - warmup.length) / (Date.now() - t0);
    await cut;
    expect(slowSocket.isPaused()).toBe(true);

    slowSocket.resume();
    expect(await slow.closed()).toBe(CloseCode.TOO_SLOW);
    expect(slow.offset).toBeLessThan(expected.length);
    const back = await connect(s.id, { client: "slow-phone", resume: { generation: slow.generation!, offset: slow.offset } });
    expect(await back.closed()).toBe(CloseCode.EXITED);
    expect(back.position).toMatchObject({ mode: "append", start: slow.offset, end: expected.length });

    assertSameBytes(receivedFromStart(controller), expected, "controller");
    assertSameBytes(receivedFromStart(observer), expected, "observer");
    assertSameBytes(Buffer.concat([receivedFromStart(slow), ...back.allOutput]), expected, "slow reader");
    console.log(
      `slow reader: fast readers ${(baselineRate / 1e3).toFixed(1)} MB/s alone, ${(floodRate / 1e3).toFixed(1)} MB/s with a stalled reader ` +
        `(ratio ${(floodRate / baselineRate).toFixed(2)}); it was cut (4408) by ${(cutAt / 1e6).toFixed(1)} MB of ${(expected.length / 1e6).toFixed(1)} MB, ` +
        `then resumed ${((expected.length - slow.offset) / 1e6).toFixed(1)} MB with append`,
    );
    expect(floodRate / baselineRate).toBeGreaterThan(MIN_SPEED_RATIO);
  }, 90_000);
});
