/**
 * A session host replaced by a build of another host protocol without ending its sessions
 * (docs/design.md, What survives a restart): real server and host processes, real bash PTYs. The
 * version bump is played by WEBMUX_TEST_HOST_PROTOCOL, which makes the second server (and the
 * host it has started as successor) speak protocol HOST_PROTOCOL + 1.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { SessionInfo } from "../contract/types.ts";
import { TerminalClient } from "../testing/terminal-client.ts";
import { waitFor } from "../testing/wait.ts";
import { fetchDebugStats } from "../testing/debug-stats.ts";
import { fdPassingSupported } from "./fd-channel.ts";
import { BUN_WEBMUX, endDataDirs, listeningUrl, NODE_WEBMUX, runWebmux, serverApi, type WebmuxRun } from "../testing/webmux-process.ts";
import { HostConnection } from "./host-client.ts";
import { hostPaths, processExists } from "./host-dir.ts";
import type { AdoptedSession } from "./hosted-sessions.ts";
import { HOST_PROTOCOL, PeerRole } from "./protocol.ts";

const TOKEN = "handover-token-0123456789";
const SHELL = ["bash", "--norc", "--noprofile"];
/** The next build's host protocol, as the test plays it. */
const NEXT = { WEBMUX_TEST_HOST_PROTOCOL: String(HOST_PROTOCOL + 1) };

const dirs: string[] = [];
const clients: TerminalClient[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
  await endDataDirs(dirs, [NEXT, {}]);
});

/**
 * A start with a handover also starts the successor host under tsx and sends it the rings: on a
 * busy 2-core machine (and with tsx's cache cold after a change) that takes far longer than a plain start.
 */
const START_WITH_HANDOVER_TIMEOUT_MS = 60_000;

async function serve(dir: string, env: Record<string, string> = {}, runtime = NODE_WEBMUX): Promise<{ run: WebmuxRun; url: string }> {
  const run = runWebmux(["serve", "--port", "0", "--data-dir", dir, "--token", TOKEN, "--no-qr"], { isolated: true, env, runtime });
  return { run, url: await listeningUrl(run, undefined, START_WITH_HANDOVER_TIMEOUT_MS) };
}

const { api, sessions, create: createSession } = serverApi(TOKEN);
const create = (url: string, command: string[]): Promise<SessionInfo> => createSession(url, { command });

/** SIGTERM of a server the test started; its exit code. */
async function stopServer(server: { run: WebmuxRun }): Promise<number | null> {
  server.run.proc.kill("SIGTERM");
  return server.run.exit;
}

/** `client` types `exit <code>` into session `id`, and the server at `url` then reports that exit code. */
async function exitsWith(client: TerminalClient, url: string, id: string, code: number): Promise<void> {
  client.type(`exit ${code}\r`);
  await waitFor(async () => (await sessions(url)).find((x) => x.id === id)?.status === "exited", { timeout: 20_000, message: `${id}'s exit reported` });
  expect((await sessions(url)).find((x) => x.id === id)!.exitCode).toBe(code);
}

async function connect(url: string, id: string, options: ConstructorParameters<typeof TerminalClient>[2] = {}): Promise<TerminalClient> {
  const c = await TerminalClient.connect(url, id, { token: TOKEN, ...options });
  clients.push(c);
  return c;
}

/** The pid of the host that answers on the data dir's socket, and what it holds. */
async function hostOf(dir: string, protocol?: number): Promise<{ pid: number; sessions: AdoptedSession[] }> {
  const conn = await HostConnection.connect(hostPaths(dir), { role: PeerRole.COMMAND, build: "test", protocol });
  try {
    const { result } = await conn.request("list");
    return { pid: conn.welcome.pid, sessions: (result as { sessions: AdoptedSession[] }).sessions };
  } finally {
    conn.close();
  }
}

/** Processes whose parent is `pid` (from /proc). */
function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Running (a zombie nobody waited for counts as gone: this container's pid 1 reaps none). */
function alive(pid: number): boolean {
  try {
    return processExists(pid) && !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return false;
  }
}

describe("a session host replaced by another build", () => {
  it("hands its running sessions over: same pids, ids and generations, append resume with exact bytes, input, resize, exit status, delete and webmux stop", async () => {
    const dir = mkdtempSync(join(tmpdir(), "webmux-handover-"));
    dirs.push(dir);
    const trigger = join(dir, "go");
    const enough = join(dir, "enough");
    const first = await serve(dir);
    // a prints numbered lines from the moment the first server is gone until the new one has taken
    // over, so the handover cuts its output while it flows
    const a = await create(first.url, [
      ...SHELL,
      "-c",
      `echo A-READY; while [ ! -e ${trigger} ]; do sleep 0.05; done; n=0; while [ ! -e ${enough} ]; do seq $((n+1)) $((n+500)); n=$((n+500)); sleep 0.005; done; echo SEQ-DONE; exec bash --norc --noprofile`,
    ]);
    const b = await create(first.url, [...SHELL, "-c", "echo B-READY; exec sleep 1000"]);
    const viewer = await connect(first.url, a.id, { client: "browser-1" });
    await viewer.waitForText("A-READY");
    const oldHost = await hostOf(dir);
    expect(childrenOf(oldHost.pid).sort()).toEqual([a.pid, b.pid].sort());

    expect(await stopServer(first)).toBe(0);
    writeFileSync(trigger, "");

    // The next build: the old host refuses its hello, hands the sessions over, and the server starts.
    const second = await serve(dir, NEXT);
    expect(second.run.err()).toContain(`it handed 2 sessions over to a session host of this build`);
    // A relayed stream closed with the first server; one the old host served closed at the handover.
    await viewer.closed();
    const resumeAt = { generation: viewer.generation!, offset: viewer.offset };
    const before = Buffer.concat([viewer.snapshots[0] ?? Buffer.alloc(0), viewer.output]);
    expect(before.length).toBe(resumeAt.offset);
    const newHost = await hostOf(dir, HOST_PROTOCOL + 1);
    expect(newHost.pid).not.toBe(oldHost.pid);
    // The old host stays on as the programs' reaper: they are still its children (and so is the new host).
    expect(processExists(oldHost.pid)).toBe(true);
    expect(childrenOf(oldHost.pid).sort()).toEqual([a.pid, b.pid, newHost.pid].sort());

    const listed = await sessions(second.url);
    expect(listed.map((x) => [x.id, x.generation, x.pid, x.status]).sort()).toEqual(
      [
        [a.id, a.generation, a.pid, "running"],
        [b.id, b.generation, b.pid, "running"],
      ].sort(),
    );

    const resumed = await connect(second.url, a.id, { client: "browser-1", resume: resumeAt });
    await resumed.waitForFrames((f) => f.some((x) => x.type === "status"));
    expect(resumed.position).toMatchObject({ mode: "append", start: resumeAt.offset, generation: a.generation });
    writeFileSync(enough, "");
    await resumed.waitForText("SEQ-DONE", 60_000);
    // The shell exec'd after SEQ-DONE prints its prompt a moment later: compare once the client has
    // everything the buffer holds (and the buffer has stopped growing).
    const { all, held } = await waitFor(
      async () => {
        const buffer = await api(second.url, `/api/sessions/${a.id}/buffer`);
        expect(buffer.headers.get("x-webmux-start")).toBe("0");
        expect(buffer.headers.get("x-webmux-generation")).toBe(a.generation);
        const all = Buffer.from(await buffer.arrayBuffer());
        const held = Buffer.concat([before, resumed.output]);
        return held.length === all.length ? { all, held } : null;
      },
      { timeout: 20_000, message: "the client holds what the buffer holds" },
    );
    // Nothing lost, nothing doubled across the handover.
    expect(held.length).toBe(all.length);
    expect(held.equals(all)).toBe(true);
    const numbers = held.toString("latin1").replace(/\r/g, "").split("\n").filter((l) => /^\d+$/.test(l));
    expect(numbers.length).toBeGreaterThan(500);
    expect(numbers.length % 500).toBe(0);
    expect(numbers.findIndex((n, i) => Number(n) !== i + 1)).toBe(-1);

    // Input reaches the program, and the new host resizes a terminal it did not open.
    resumed.takeControl();
    resumed.resize(101, 31);
    resumed.type("stty size; echo IN-$((6*7))\r");
    await resumed.waitForText("IN-42", 20_000);
    await resumed.waitForText("31 101", 20_000);

    // The program's exit status reaches the new host from the old one, which waited for it.
    await exitsWith(resumed, second.url, a.id, 7);
    expect(processExists(a.pid!)).toBe(false);
    const deleted = await api(second.url, `/api/sessions/${a.id}`, { method: "DELETE" });
    expect(deleted.status).toBeLessThan(300);
    expect((await sessions(second.url)).map((x) => x.id)).toEqual([b.id]);

    // The successor serves the terminal streams too (docs/design.md § The session host serves the streams).
    if (fdPassingSupported()) expect((await fetchDebugStats(second.url, TOKEN)).terminalConnections).toBe(0);

    // b is deleted: the old host, its last program gone, exits; the stream channel's path it listened at stays the successor's.
    expect((await api(second.url, `/api/sessions/${b.id}`, { method: "DELETE" })).status).toBeLessThan(300);
    expect(processExists(b.pid!)).toBe(false);
    await waitFor(() => !processExists(oldHost.pid), { timeout: 20_000, message: "the old host gone with its last program" });
    // (a new server opens a new channel: the path must still be there)
    const c = await create(second.url, [...SHELL, "-c", "echo C-$((1+2)); exec sleep 1000"]);
    expect(await stopServer(second)).toBe(0);
    const again = await serve(dir, NEXT);
    const cv = await connect(again.url, c.id);
    await cv.waitForText("C-3");
    if (fdPassingSupported()) expect((await fetchDebugStats(again.url, TOKEN)).terminalConnections).toBe(0);

    // webmux stop of the new build: c gets its SIGHUP from the new host.
    const stop = runWebmux(["stop", "--data-dir", dir], { env: NEXT });
    expect(await stop.exit).toBe(0);
    expect(stop.out()).toContain("ended 1 session");
    expect(processExists(c.pid!)).toBe(false);
    await waitFor(() => !processExists(newHost.pid) && !processExists(oldHost.pid), { timeout: 20_000, message: "both hosts gone" });
    await stopServer(again);
  }, 90_000);

  it("a second handover (N → N+1 → N+2): the sessions survive both, the exit status goes through both reapers, and webmux stop ends every process", async () => {
    const dir = mkdtempSync(join(tmpdir(), "webmux-handover-"));
    dirs.push(dir);
    const AFTER_NEXT = { WEBMUX_TEST_HOST_PROTOCOL: String(HOST_PROTOCOL + 2) };
    const first = await serve(dir);
    const a = await create(first.url, SHELL);
    const b = await create(first.url, [...SHELL, "-c", "echo B-READY; exec sleep 1000"]);
    const host0 = await hostOf(dir);
    await stopServer(first);

    const second = await serve(dir, NEXT);
    expect(second.run.err()).toContain("it handed 2 sessions over");
    const host1 = await hostOf(dir, HOST_PROTOCOL + 1);
    const viewer = await connect(second.url, a.id);
    viewer.takeControl();
    viewer.type("echo ONE-$((20+1))\r");
    await viewer.waitForText("ONE-21", 20_000);
    const resumeAt = { generation: viewer.generation!, offset: viewer.offset };
    await stopServer(second);

    // The host that took the sessions over hands them over again, and stays on as a reaper itself.
    const third = await serve(dir, AFTER_NEXT);
    expect(third.run.err()).toContain("it handed 2 sessions over");
    await viewer.closed();
    const host2 = await hostOf(dir, HOST_PROTOCOL + 2);
    expect(new Set([host0.pid, host1.pid, host2.pid]).size).toBe(3);
    expect(processExists(host0.pid) && processExists(host1.pid)).toBe(true);
    expect(childrenOf(host0.pid).sort()).toEqual([a.pid, b.pid, host1.pid].sort());
    expect(childrenOf(host1.pid)).toEqual([host2.pid]);
    expect((await sessions(third.url)).map((x) => [x.id, x.generation, x.pid, x.status]).sort()).toEqual(
      [
        [a.id, a.generation, a.pid, "running"],
        [b.id, b.generation, b.pid, "running"],
      ].sort(),
    );

    const resumed = await connect(third.url, a.id, { resume: resumeAt });
    await resumed.waitForFrames((f) => f.some((x) => x.type === "status"));
    expect(resumed.position).toMatchObject({ mode: "append", start: resumeAt.offset, generation: a.generation });
    resumed.takeControl();
    resumed.type("echo TWO-$((40+2))\r");
    await resumed.waitForText("TWO-42", 20_000);

    // a's exit status: host0 waits for it, tells host1, which tells host2.
    await exitsWith(resumed, third.url, a.id, 7);

    const stop = runWebmux(["stop", "--data-dir", dir], { env: AFTER_NEXT });
    expect(await stop.exit).toBe(0);
    expect(stop.out()).toContain("ended 2 sessions");
    await waitFor(() => ![a.pid!, b.pid!, host0.pid, host1.pid, host2.pid].some(alive), { timeout: 20_000, message: "every process gone" });
    await stopServer(third);
  }, 90_000);

  it("a reaper killed with SIGKILL: the new host still sees its program end (as a hang-up, the status is lost)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "webmux-handover-"));
    dirs.push(dir);
    const first = await serve(dir);
    const s = await create(first.url, [...SHELL, "-c", "echo READY; exec sleep 1000"]);
    const oldHost = await hostOf(dir);
    await stopServer(first);
    const second = await serve(dir, NEXT);
    expect(second.run.err()).toContain("it handed 1 session over");
    process.kill(oldHost.pid, "SIGKILL");
    await waitFor(() => !processExists(oldHost.pid) || readFileSync(`/proc/${oldHost.pid}/status`, "utf8").includes("zombie"), { message: "the reaper gone" });
    expect((await sessions(second.url)).map((x) => [x.id, x.status])).toEqual([[s.id, "running"]]);
    process.kill(s.pid!, "SIGKILL");
    await waitFor(async () => (await sessions(second.url)).find((x) => x.id === s.id)?.status === "exited", { timeout: 20_000, message: "the exit seen" });
    expect((await sessions(second.url))[0]!.exitCode).toBe(129);
    await stopServer(second);
  }, 60_000);

  it("a host from before handovers closes the connection at the request: the new server says so in one line and does not start; the session runs on and the old build serves it again", async () => {
    const dir = mkdtempSync(join(tmpdir(), "webmux-handover-"));
    dirs.push(dir);
    const first = await serve(dir, { WEBMUX_TEST_HOST_BEFORE_HANDOVERS: "1" });
    const s = await create(first.url, [...SHELL, "-c", "echo READY; exec sleep 1000"]);
    const oldHost = await hostOf(dir);
    await stopServer(first);
    const refused = runWebmux(["serve", "--port", "0", "--data-dir", dir, "--token", TOKEN, "--no-qr"], { isolated: true, env: NEXT });
    expect(await refused.exit).toBe(1);
    const lines = refused.err().trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("could not hand its sessions over (it closed the connection at the handover request, as a build from before handovers does)");
    expect(lines[0]).toContain("its sessions keep running there");
    expect(processExists(s.pid!)).toBe(true);
    expect(processExists(oldHost.pid)).toBe(true);
    // The old build serves the session again, from the same host.
    const again = await serve(dir, { WEBMUX_TEST_HOST_BEFORE_HANDOVERS: "1" });
    expect((await hostOf(dir)).pid).toBe(oldHost.pid);
    expect((await sessions(again.url)).map((x) => [x.id, x.generation, x.pid, x.status])).toEqual([[s.id, s.generation, s.pid, "running"]]);
    const viewer = await connect(again.url, s.id);
    await viewer.waitForText("READY");
    await stopServer(again);
  }, 60_000);

  it("a host on Bun cannot hand over: the new server says so in one line and does not start; the old host listens again and keeps the session", async () => {
    const dir = mkdtempSync(join(tmpdir(), "webmux-handover-"));
    dirs.push(dir);
    const first = await serve(dir, {}, BUN_WEBMUX);
    const s = await create(first.url, [...SHELL, "-c", "echo READY; exec sleep 1000"]);
    await stopServer(first);
    const refused = runWebmux(["serve", "--port", "0", "--data-dir", dir, "--token", TOKEN, "--no-qr"], { isolated: true, env: NEXT });
    expect(await refused.exit).toBe(1);
    const lines = refused.err().trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("could not hand its sessions over (its PTYs run on Bun's terminal API, which does not give out a terminal's descriptor)");
    expect(processExists(s.pid!)).toBe(true);
    // The old build serves the session again, as before the attempt.
    const again = await serve(dir);
    expect((await sessions(again.url)).map((x) => [x.id, x.generation, x.pid, x.status])).toEqual([[s.id, s.generation, s.pid, "running"]]);
    await stopServer(again);
  }, 60_000);
});
