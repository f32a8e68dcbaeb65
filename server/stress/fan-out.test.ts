import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CloseCode } from "../contract/protocol.ts";
import { DEFAULT_SCROLLBACK_LINES } from "../session/headless-screen.ts";
import type { SessionInfo } from "../contract/types.ts";
import { TerminalClient } from "../testing/terminal-client.ts";
import { waitFor } from "../testing/wait.ts";
import { fetchDebugStats } from "../testing/debug-stats.ts";
import { startServerProcess, type ServerProcess } from "../testing/webmux-process.ts";
import { assertSameBytes, numberedLines, PERL_OUT, receivedFromStart } from "../testing/stream-check.ts";

/** Sessions printing at once (docs/design.md § Hardening and limits). */
const SESSIONS = 50;
/** Clients per session: the controller, two observers and one that drops and resumes midway. */
const CLIENTS_PER_SESSION = 4;
/** Each session prints this many batches… */
const BATCHES = 50;
/** …of this many numbered lines (~10 KiB)… */
const LINES_PER_BATCH = 800;
/** …one every this many seconds: 5 s of printing or more, ~4 MB/s in all before the fan-out. */
const BATCH_PAUSE_S = 0.1;
/**
 * What the headless mirror keeps per scrollback row at 80 columns: xterm stores 12 bytes per cell
 * plus per-line objects; measured 1.6 KiB (50 screens × 10 000 rows ≈ 800 MiB). A session that
 * printed past its scrollback (10 000 rows) thus holds ~17 MiB there — by far its largest cost.
 */
const MIRROR_BYTES_PER_ROW = 2 * 1024;
/** Send-queue allowance per client: under the 1 MiB pause mark, far under the 4 MiB cut (4408). */
const QUEUE_BYTES_PER_CLIENT = 1024 * 1024;
/** How often the server's RSS is sampled while the sessions print. */
const RSS_SAMPLE_MS = 250;

/**
 * Waits for one line (the start signal, so every session starts once all clients are attached),
 * then prints the numbered batches and exits. Echo is off so the signal itself prints nothing.
 */
const GENERATOR = `stty -echo; exec perl -e '${PERL_OUT} <STDIN>; my ($b,$l,$p,$t)=@ARGV; my $n=0; for (1..$b) { my $s=""; $s .= "$t-".(++$n)."\\n" for 1..$l; out($s); select(undef,undef,undef,$p) } out("END\\n")' ${BATCHES} ${LINES_PER_BATCH} ${BATCH_PAUSE_S}`;

let server: ServerProcess;
let dataDir: string;
beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "webmux-fanout-"));
  server = await startServerProcess(dataDir);
});
afterAll(async () => {
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function createSession(tag: string): Promise<SessionInfo> {
  const res = await fetch(`${server.url}/api/sessions`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
    body: JSON.stringify({ command: ["sh", "-c", `${GENERATOR} ${tag}`], title: tag }),
  });
  expect(res.status).toBe(201);
  return (await res.json()) as SessionInfo;
}

/** A client that closes once it has half the output and comes back with its resume point. */
async function dropAndResume(id: string, clientId: string, client: TerminalClient, half: number): Promise<Buffer> {
  await waitFor(() => client.offset >= half, { timeout: 30_000, message: "half the output" });
  await client.close();
  const before = receivedFromStart(client);
  expect(before.length).toBe(client.offset);
  const back = await TerminalClient.connect(server.url, id, { token: server.token, client: clientId, resume: { generation: client.generation!, offset: client.offset } });
  expect(await back.closed()).toBe(CloseCode.EXITED);
  expect(back.position).toMatchObject({ mode: "append", start: client.offset });
  return Buffer.concat([before, ...back.allOutput]);
}

describe("50 sessions × 4 clients printing at once", () => {
  it("gives every client exactly the session's output while the server's RSS stays bounded", async () => {
    const tags = Array.from({ length: SESSIONS }, (_, i) => `s${String(i).padStart(2, "0")}`);
    const sessions = await Promise.all(tags.map(createSession));
    const expected = new Map(tags.map((t) => [t, numberedLines(t, BATCHES * LINES_PER_BATCH, "END\r\n")]));
    const clients = await Promise.all(
      sessions.map(async (s) => {
        const list: TerminalClient[] = [];
        for (let i = 0; i < CLIENTS_PER_SESSION; i++) list.push(await TerminalClient.connect(server.url, s.id, { token: server.token, client: `load-${s.title}-${i}` }));
        return list;
      }),
    );
    const baseline = await fetchDebugStats(server.url, server.token);
    expect(baseline).toMatchObject({ runningPtys: SESSIONS, terminalConnections: SESSIONS * CLIENTS_PER_SESSION, terminalStreams: SESSIONS });

    let peakRss = baseline.rssBytes;
    let peakHeap = baseline.heapUsedBytes;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const now = await fetchDebugStats(server.url, server.token);
        peakRss = Math.max(peakRss, now.rssBytes);
        peakHeap = Math.max(peakHeap, now.heapUsedBytes);
        await new Promise((r) => setTimeout(r, RSS_SAMPLE_MS));
      }
    })();

    const started = Date.now();
    for (const list of clients) list[0]!.type("\r");
    const results = await Promise.all(
      sessions.map(async (s, i) => {
        const [controller, a, b, dropper] = clients[i]!;
        const resumed = dropAndResume(s.id, `load-${s.title}-3`, dropper!, Math.floor(expected.get(s.title)!.length / 2));
        for (const c of [controller!, a!, b!]) expect(await c.closed()).toBe(CloseCode.EXITED);
        return { s, streams: [receivedFromStart(controller!), receivedFromStart(a!), receivedFromStart(b!), await resumed] };
      }),
    );
    const elapsed = Date.now() - started;
    sampling = false;
    await sampler;

    for (const { s, streams } of results) {
      const buffer = await fetch(`${server.url}/api/sessions/${s.id}/buffer`, { headers: { authorization: `Bearer ${server.token}` } });
      expect(buffer.headers.get("x-webmux-truncated")).toBe("false");
      const ring = Buffer.from(await buffer.arrayBuffer());
      // the session printed what the generator says, and each client holds exactly that
      assertSameBytes(ring, expected.get(s.title)!, `${s.title} ring`);
      streams.forEach((bytes, i) => assertSameBytes(bytes, ring, `${s.title} client ${i}`));
    }
    // Bounded by what the server is meant to keep — rings, the mirrors' scrollback, bounded send
    // queues — whatever the volume sent (4× the printed bytes).
    const mirrorRows = Math.min(BATCHES * LINES_PER_BATCH + 1, DEFAULT_SCROLLBACK_LINES + 24);
    const retainedPerSession = expected.get(tags[0]!)!.length + mirrorRows * MIRROR_BYTES_PER_ROW;
    const ceiling = baseline.rssBytes + SESSIONS * retainedPerSession + SESSIONS * CLIENTS_PER_SESSION * QUEUE_BYTES_PER_CLIENT;
    const totalBytes = [...expected.values()].reduce((n, b) => n + b.length, 0);
    const mib = (n: number) => `${(n / 2 ** 20).toFixed(0)} MiB`;
    console.log(
      `fan-out: ${SESSIONS}×${CLIENTS_PER_SESSION} clients, ${(totalBytes / 1e6).toFixed(1)} MB printed in ${elapsed} ms; ` +
        `server RSS ${mib(baseline.rssBytes)} attached, peak ${mib(peakRss)} (main heap ${mib(peakHeap)}), ceiling ${mib(ceiling)}`,
    );
    expect(peakRss).toBeLessThan(ceiling);
  }, 60_000);
});
