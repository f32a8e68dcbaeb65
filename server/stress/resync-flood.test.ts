import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeResync, ServerFrame } from "../contract/frames.ts";
import type { SessionInfo } from "../contract/types.ts";
import { TerminalClient } from "../testing/terminal-client.ts";
import { waitFor } from "../testing/wait.ts";
import { Opcode, RawWebSocket } from "../testing/raw-websocket.ts";
import { startServerProcess, type ServerProcess } from "../testing/webmux-process.ts";

/** The replay ring: every resync would copy it whole, as a snapshot. */
const RING_BYTES = 1024 * 1024;
/** Output that almost fills the ring without wrapping it (an untruncated snapshot is the copy of it all). */
const FILL_BYTES = RING_BYTES - 64 * 1024;
/** Resyncs in the one write (7 bytes each). */
const RESYNCS = 1000;
/** The server may grow by at most this while it handles them: a few snapshots, not a thousand. */
const MAX_RSS_GROWTH_BYTES = 64 * 1024 * 1024;
/** Keys the victim types while the flood is handled (3 s of typing)… */
const KEYS = 300;
/** …one every this many ms. */
const KEY_INTERVAL_MS = 10;
/** The victim's echo p99 must stay under this on a loaded 2-core machine (a server copying a thousand snapshots stalls for seconds). */
const MAX_P99_MS = 250;
const ECHO_TIMEOUT_MS = 10_000;

let server: ServerProcess;
let dataDir: string;
beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "webmux-resync-"));
  server = await startServerProcess(dataDir, ["--buffer-bytes", String(RING_BYTES)]);
});
afterAll(async () => {
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const api = (path: string, body: unknown) =>
  fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });

/** kB figures of the server's /proc status: VmRSS now, VmHWM the peak so far. */
function memory(): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${server.proc.pid}/status`, "utf8");
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)![1]) * 1024;
  return { rss: kb("VmRSS"), peak: kb("VmHWM") };
}

/**
 * Type a key every KEY_INTERVAL_MS whatever the echoes do (as a user would), and time each key to
 * its echo: a server stalled for a second delays every key typed in that second, not just one.
 */
async function echoLatencies(client: TerminalClient, keys: number): Promise<number[]> {
  const sentAt: number[] = [];
  const latencies: number[] = [];
  let echoed = 0;
  const done = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${keys - echoed} echoes missing after ${ECHO_TIMEOUT_MS} ms`)), keys * KEY_INTERVAL_MS + ECHO_TIMEOUT_MS);
    const onMessage = (data: Buffer) => {
      if (data[0] !== ServerFrame.OUTPUT) return;
      const now = performance.now();
      for (let i = 1; i < data.length && echoed < keys; i++) latencies.push(now - sentAt[echoed++]!);
      if (echoed < keys) return;
      clearTimeout(timer);
      client.ws.off("message", onMessage);
      resolve();
    };
    client.ws.on("message", onMessage);
  });
  for (let i = 0; i < keys; i++) {
    sentAt.push(performance.now());
    client.type("k");
    await new Promise((resolve) => setTimeout(resolve, KEY_INTERVAL_MS));
  }
  await done;
  return latencies;
}

/** Ping and wait for the pong: the server has handled everything sent before and queued what it answered. */
async function pingRoundTrip(ws: RawWebSocket): Promise<void> {
  const pongs = () => ws.frames.filter((f) => f.opcode === Opcode.PONG).length;
  const expected = pongs() + 1;
  ws.send(Opcode.PING, Buffer.from("rt"));
  await waitFor(() => pongs() >= expected, { timeout: 30_000, message: "pong" });
}

describe("a thousand resyncs in one write from a read-only connection that does not read", () => {
  it("cost the server a few snapshots, not a thousand: RSS and another client's echo stay bounded", async () => {
    const settings = await fetch(`${server.url}/api/settings`, {
      method: "PUT",
      headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
      body: JSON.stringify({ open_api: { enabled: true } }),
    });
    expect(settings.status).toBe(200);
    const reader = ((await (await api("/api/tokens", { name: "observer", capabilities: ["terminal:read"] })).json()) as { token: string }).token;
    // Fill the ring, then echo what is typed (the tty's own echo: `cat` only swallows the lines).
    const script = `head -c ${FILL_BYTES} /dev/zero | tr '\\0' x; printf READY; exec cat > /dev/null`;
    const session = (await (await api("/api/sessions", { command: ["sh", "-c", script] })).json()) as SessionInfo;

    const victim = await TerminalClient.connect(server.url, session.id, { token: server.token, client: "victim" });
    await victim.waitForText("READY");
    await echoLatencies(victim, 20); // warm-up

    const attacker = await RawWebSocket.open(server.url, `/ws/s/${session.id}?client=attacker`, { headers: { authorization: `Bearer ${reader}` } });
    expect(attacker.status).toBe(101);
    attacker.socket.pause();

    const before = memory();
    const flood = Buffer.concat(Array.from({ length: RESYNCS }, () => RawWebSocket.frame(Opcode.BINARY, encodeResync())));
    const typing = echoLatencies(victim, KEYS);
    await attacker.write(flood);
    const latencies = await typing;
    // The last echoes queued behind the flood's handling: once they are through, so is the flood.
    const after = memory();
    latencies.sort((a, b) => a - b);
    const p99 = latencies[Math.ceil(0.99 * latencies.length) - 1]!;
    const growth = after.peak - before.rss;
    console.log(
      `resync flood: RSS ${(before.rss / 2 ** 20).toFixed(0)} MB before, peak ${(after.peak / 2 ** 20).toFixed(0)} MB, ${(after.rss / 2 ** 20).toFixed(0)} MB after; victim echo p50 ${latencies[latencies.length >> 1]!.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${latencies.at(-1)!.toFixed(1)} ms`,
    );
    expect(growth).toBeLessThan(MAX_RSS_GROWTH_BYTES);
    expect(p99).toBeLessThan(MAX_P99_MS);

    // Reading again, the attacker gets its attach replay and at most two more: the one in flight when
    // the flood came and the one the other resyncs were coalesced into.
    attacker.socket.resume();
    const snapshots = () => attacker.frames.filter((f) => f.opcode === Opcode.BINARY && f.payload[0] === ServerFrame.SNAPSHOT).length;
    await waitFor(() => snapshots() >= 2, { timeout: 30_000, message: "the resync's replay" });
    for (let i = 0; i < 2; i++) await pingRoundTrip(attacker);
    expect(snapshots()).toBeLessThanOrEqual(3);
    await victim.close();
    attacker.destroy();
  });
});

describe("a resync from a connection already over its send-queue bound", () => {
  it("is cut with 4408 and no snapshot is built for it (the attach replay alone is over the bound)", async () => {
    // A ring well past the 4 MiB queue bound: the attach replay alone puts a client that does not read over it.
    const ringBytes = 24 * 1024 * 1024;
    const outputBytes = 20 * 1024 * 1024;
    const big = await startServerProcess(join(dataDir, "over-bound"), ["--buffer-bytes", String(ringBytes)]);
    try {
      const headers = { authorization: `Bearer ${big.token}`, "content-type": "application/json" };
      const script = `head -c ${outputBytes} /dev/zero | tr '\\0' x; exec sleep 600`;
      const session = (await (await fetch(`${big.url}/api/sessions`, { method: "POST", headers, body: JSON.stringify({ command: ["sh", "-c", script] }) })).json()) as SessionInfo;
      await waitFor(
        async () => {
          const res = await fetch(`${big.url}/api/sessions/${session.id}/buffer`, { headers });
          await res.body?.cancel();
          return Number(res.headers.get("x-webmux-end")) >= outputBytes;
        },
        { timeout: 60_000, interval: 100, message: "the output in the ring" },
      );
      const client = await RawWebSocket.open(big.url, `/ws/s/${session.id}?client=over-bound`, { headers: { authorization: `Bearer ${big.token}` } });
      expect(client.status).toBe(101);
      // Not reading: the 20 MiB snapshot of the attach stays queued on the server, past the bound.
      client.socket.pause();
      const sentAt = performance.now();
      await client.write(RawWebSocket.frame(Opcode.BINARY, encodeResync()));
      client.socket.resume();
      await waitFor(() => client.closeCode !== null, { timeout: 60_000, message: "the connection cut" });
      const positions = client.frames.filter((f) => f.opcode === Opcode.BINARY && f.payload[0] === ServerFrame.POSITION).length;
      console.log(`over-bound resync: cut with ${client.closeCode} after ${(performance.now() - sentAt).toFixed(0)} ms, ${positions} replay(s) received`);
      expect(client.closeCode).toBe(4408);
      // Only the attach's replay: the resync was cut before a second 20 MiB snapshot was queued.
      expect(positions).toBe(1);
      client.destroy();
    } finally {
      await big.stop();
    }
  }, 120_000);
});
