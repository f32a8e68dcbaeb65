import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeInput, encodeSubmit } from "../contract/frames.ts";
import type { Session } from "../session/session.ts";
import { TerminalClient } from "../testing/terminal-client.ts";
import { startTestServer, type TestServer } from "../testing/test-server.ts";
import { waitFor } from "../testing/wait.ts";
import { fetchDebugStats, leakFigures } from "../testing/debug-stats.ts";
import { Opcode, RawWebSocket } from "../testing/raw-websocket.ts";
import { HEX_READER } from "../testing/stream-check.ts";

/** Connect/disconnect cycles of the churn test (docs/design.md § Hardening and limits). */
const CYCLES = 1000;
/** Cycles in flight at once: a crowd, well under the per-address cap. */
const CONCURRENT_CYCLES = 25;
/**
 * Timers that come and go by themselves while a session prints (its preview refresh, the mirror's
 * flush, a test's own poll): a leak of one per cycle would show as hundreds, not as these.
 */
const TRANSIENT_TIMERS = 4;


let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ openApi: true });
});
afterAll(async () => {
  await server?.stop();
});

const wsPath = (id: string, query = "") => `/ws/s/${id}${query}`;
const auth = () => ({ authorization: `Bearer ${server.token}` });
const stats = () => fetchDebugStats(server.url, server.token);

/** Everything the reader program received, as hex. */
function received(watcher: TerminalClient): string {
  return [...watcher.text.matchAll(/GOT:([0-9a-f]*)/g)].map((m) => m[1]).join("");
}

async function readerSession(): Promise<{ session: Session; watcher: TerminalClient }> {
  const session = server.registry.create({ command: ["sh", "-c", HEX_READER] });
  const watcher = await TerminalClient.connect(server.url, session.id, { token: server.token, client: "watcher-0001" });
  await watcher.waitForText("READY");
  return { session, watcher };
}

/** Wait until no connection but `keep` is left anywhere on the server. */
async function settled(keep: number): Promise<void> {
  await waitFor(async () => {
    const s = await stats();
    return s.openSockets === keep && s.terminalConnections === keep && s.httpConnections === keep + 1;
  }, { message: `only ${keep} connection(s) left` });
}

describe("clients that vanish", () => {
  it("mid-frame: half an input or submission frame, then gone — nothing reaches the program", async () => {
    const { session, watcher } = await readerSession();
    for (const frame of [encodeInput("x".repeat(200)), encodeSubmit({ id: "half-sub-0001", generation: session.generation }, "y".repeat(300), "\r")]) {
      const raw = await RawWebSocket.open(server.url, wsPath(session.id, "?client=vanisher-01"), { headers: auth() });
      expect(raw.status).toBe(101);
      const whole = RawWebSocket.frame(Opcode.BINARY, frame);
      await raw.write(whole.subarray(0, Math.floor(whole.length / 2)));
      raw.destroy();
      await settled(1);
    }
    // The watcher's input is the first thing the program ever reads.
    watcher.type("Z");
    await watcher.waitForText("GOT:5a");
    expect(received(watcher)).toBe("5a");
    expect(session.submissions.query("vanisher-01", ["half-sub-0001"])[0]!.state).toBe("missing");
    await watcher.close();
  });

  it("mid-submission: the author goes while its body is being written; it is written exactly once, and a reconnect hears `written`", async () => {
    const go = join(server.dataDir, "go-read");
    // Reads nothing until told, then reports each submission (up to its \r) by length and hash.
    const program = `stty raw -echo; exec perl -MDigest::SHA=sha256_hex -e '$|=1; print "READY\\n"; select(undef,undef,undef,0.02) until -e $ARGV[0]; my $all=""; while (sysread(STDIN, my $b, 65536)) { $all .= $b; if ($all =~ /\\r$/) { print "GOT ", length($all), " ", sha256_hex($all), "\\n"; $all="" } }' ${go}`;
    const session = server.registry.create({ command: ["sh", "-c", program] });
    const author = await TerminalClient.connect(server.url, session.id, { token: server.token, client: "author-0001" });
    await author.waitForText("READY");
    const body = "p".repeat(200_000);
    author.submit("vanishing-sub-1", body, "\r");
    await waitFor(() => author.submitStatuses.some((s) => s.id === "vanishing-sub-1"), { message: "received" });
    expect(author.submitStatuses.map((s) => s.state)).toEqual(["received"]);
    (author.ws as unknown as { _socket: { destroy(): void } })._socket.destroy();
    await settled(0);
    writeFileSync(go, "");
    const back = await TerminalClient.connect(server.url, session.id, { token: server.token, client: "author-0001" });
    const sha = createHash("sha256").update(body + "\r").digest("hex");
    await back.waitForText(`GOT ${body.length + 1} ${sha}`);
    back.query(["vanishing-sub-1"]);
    await waitFor(() => back.submitStatuses.some((s) => s.id === "vanishing-sub-1"), { message: "query answered" });
    expect(back.submitStatuses.find((s) => s.id === "vanishing-sub-1")!.state).toBe("written");
    expect(back.shownText.split("GOT ").length - 1).toBe(1);
    await back.close();
  });

  it("mid-run: a caller of POST /api/agent/run that goes away gives its run slot back", async () => {
    const session = server.registry.create({ command: ["bash", "--norc", "--noprofile", "-i"], env: { PS1: "$ " } });
    const { hostname, port } = new URL(server.url);
    const body = JSON.stringify({ command: "sleep 2; echo slow-done", pane_id: session.id, timeout: 20_000 });
    const socket = connect({ host: hostname, port: Number(port) });
    socket.on("error", () => {});
    socket.write(
      `POST /api/agent/run HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAuthorization: Bearer ${server.token}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    await waitFor(() => server.agent.slots.used("global") === 1, { message: "run in progress" });
    socket.destroy();
    await waitFor(() => server.agent.slots.used("global") === 0, { message: "slot given back" });
    // The session and the Agent API carry on: the next run waits for the shell and completes.
    const next = await server.api("/api/agent/run", { method: "POST", json: { command: "echo after-vanish", pane_id: session.id, timeout: 20_000 } });
    expect(next.status).toBe(200);
    expect(((await next.json()) as { stdout: string }).stdout).toContain("after-vanish");
    expect(session.status).toBe("running");
    await settled(0);
  });
});

describe(`${CYCLES} connect/disconnect cycles`, () => {
  it("leave no connection, socket, stream, timer, listener or PTY behind, and the session carries on", async () => {
    const session = server.registry.create({ command: ["sh", "-c", "while :; do echo tick; sleep 0.05; done"] });
    const other = server.registry.create({ command: ["sleep", "600"] });
    const listeners = () => ({
      output: session.events.listenerCount("output"),
      exit: session.events.listenerCount("exit"),
      changed: session.events.listenerCount("changed"),
      registryUpdated: server.registry.events.listenerCount("updated"),
      registryRemoved: server.registry.events.listenerCount("removed"),
    });
    await settled(0);
    const before = { figures: leakFigures(await stats()), listeners: listeners() };

    const styles: Array<(i: number) => Promise<void>> = [
      // a tab that attaches, gets its replay and leaves politely
      async (i) => {
        const c = await TerminalClient.connect(server.url, session.id, { token: server.token, client: `churn-${i}-clean` });
        await waitFor(() => c.status, { message: "replay" });
        await c.close();
      },
      // a phone that loses its network right after the upgrade
      async (i) => {
        const c = await TerminalClient.connect(server.url, session.id, { token: server.token, client: `churn-${i}-gone` });
        c.ws.terminate();
      },
      // a connection dropped during the handshake
      async () => {
        RawWebSocket.start(server.url, wsPath(session.id), { headers: auth() }).destroy();
      },
      // half a frame, then gone
      async () => {
        const raw = await RawWebSocket.open(server.url, wsPath(session.id), { headers: auth() });
        await raw.write(RawWebSocket.frame(Opcode.BINARY, encodeInput("never typed")).subarray(0, 5));
        raw.destroy();
      },
    ];
    for (let start = 0; start < CYCLES; start += CONCURRENT_CYCLES) {
      await Promise.all(Array.from({ length: Math.min(CONCURRENT_CYCLES, CYCLES - start) }, (_, k) => styles[(start + k) % styles.length]!(start + k)));
    }

    const same = (now: Record<string, number | null>) => {
      const { timers, ...rest } = now;
      const { timers: timersBefore, ...restBefore } = before.figures;
      return JSON.stringify(rest) === JSON.stringify(restBefore) && timers! <= timersBefore! + TRANSIENT_TIMERS;
    };
    let last = before.figures;
    await waitFor(async () => same((last = leakFigures(await stats()))), { timeout: 15_000, message: "figures back to where they were" }).catch((err: Error) => {
      throw new Error(`${err.message}: before ${JSON.stringify(before.figures)}, now ${JSON.stringify(last)}`);
    });
    expect(listeners()).toEqual(before.listeners);
    expect(session.clients).toBe(0);
    expect(session.lease.info).toBeNull();
    expect([session.status, other.status]).toEqual(["running", "running"]);
    const after = await TerminalClient.connect(server.url, session.id, { token: server.token });
    await after.waitForText("tick");
    await after.close();
  }, 60_000);
});
