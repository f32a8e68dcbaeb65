/**
 * Sessions outlive `webmux serve` when they run in the session host (docs/design.md, What survives
 * a restart): real server processes killed with SIGKILL or stopped with SIGTERM, real bash PTYs in
 * the real host, a browser-style client and the real `webmux attach` resuming across the restart.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { SessionInfo } from "../contract/types.ts";
import { OuterTerminal } from "../cli/outer-terminal.ts";
import { TerminalClient } from "../testing/terminal-client.ts";
import { waitFor } from "../testing/wait.ts";
import { receivedFromStart } from "../testing/stream-check.ts";
import { BUN_WEBMUX, endDataDirs, listeningUrl, NODE_WEBMUX, runWebmux, serverApi, stopWebmuxProcesses, type WebmuxRun } from "../testing/webmux-process.ts";
import { HostConnection } from "./host-client.ts";
import { fdPassingSupported } from "./fd-channel.ts";
import { hostPaths, processExists } from "./host-dir.ts";
import type { AdoptedSession } from "./hosted-sessions.ts";
import { HOST_PROTOCOL, PeerRole } from "./protocol.ts";
import { HostedSessions } from "./hosted-sessions.ts";
import { SessionHost } from "./session-host.ts";
import { spawnPty } from "../pty/index.ts";

const TOKEN = "survive-token-0123456789";
const SHELL = ["bash", "--norc", "--noprofile"];
/** The whole of `seq 1 2000000` (≈ 15 MB) fits: a resume point stays in the ring while no server runs. */
const BUFFER_BYTES = String(64 * 1024 * 1024);

const dirs: string[] = [];
const outers: OuterTerminal[] = [];
const clients: TerminalClient[] = [];

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "webmux-survive-"));
  dirs.push(dir);
  return dir;
}

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
  for (const o of outers.splice(0)) o.kill();
  await endDataDirs(dirs);
});

type Runtime = "node" | "bun";

/**
 * How the terminal streams travel (docs/design.md § The session host serves the streams): handed to
 * the host (the default where descriptors can be handed: Node on Linux), or relayed through the
 * server (Bun, TLS, or WEBMUX_HOST_STREAMS=relay). A relayed stream drops with its server and
 * resumes; a handed one does not even drop.
 */
type Streams = "relay" | "handed";
const STREAMS: Streams[] = fdPassingSupported() ? ["relay", "handed"] : ["relay"];

async function serve(dir: string, port = "0", runtime: Runtime = "node", streams: Streams = "relay"): Promise<{ run: WebmuxRun; url: string }> {
  const run = runWebmux(["serve", "--port", port, "--data-dir", dir, "--token", TOKEN, "--no-qr", "--buffer-bytes", BUFFER_BYTES], {
    runtime: runtime === "bun" ? BUN_WEBMUX : NODE_WEBMUX,
    isolated: true,
    env: streams === "relay" ? { WEBMUX_HOST_STREAMS: "relay" } : {},
  });
  return { run, url: await listeningUrl(run) };
}

const { api, sessions, create: createSession } = serverApi(TOKEN);
const create = (url: string, command: string[]): Promise<SessionInfo> => createSession(url, { command });

async function connect(url: string, id: string, options: ConstructorParameters<typeof TerminalClient>[2] = {}): Promise<TerminalClient> {
  const c = await TerminalClient.connect(url, id, { token: TOKEN, ...options });
  clients.push(c);
  return c;
}

/** What the host holds, asked directly (as `webmux ls` does without a server). */
async function hostSessions(dir: string): Promise<AdoptedSession[]> {
  const conn = await HostConnection.connect(hostPaths(dir), { role: PeerRole.COMMAND, build: "test" });
  try {
    const { result } = await conn.request("list");
    return (result as { sessions: AdoptedSession[] }).sessions;
  } finally {
    conn.close();
  }
}

function killHard(run: WebmuxRun): Promise<number | null> {
  run.proc.kill("SIGKILL");
  return run.exit;
}

/** The numbers of `seq` lines in a stream, checked to be 1..n exactly once and in order. */
function expectSeqLines(text: string, n: number): void {
  // (a terminal's copy begins with the reset and mode sequences webmux attach writes)
  const lines = text.replace(/\x1b(\[[0-9;?]*[ -/]*[@-~]|[^[])/g, "").replace(/\r/g, "").split("\n").filter((l) => /^\d+$/.test(l));
  for (let i = 0; i < lines.length; i++) if (Number(lines[i]) !== i + 1) throw new Error(`line ${i + 1} is ${lines[i]}: ${JSON.stringify(text.slice(Math.max(0, text.indexOf(`\n${i}\r`) - 50), text.indexOf(`\n${i}\r`) + 80))}`);
  expect(lines.length).toBe(n);
}

/**
 * `seq 1 2000000` with a browser-style client and `webmux attach` on it, and the server killed with
 * SIGKILL in its second half: the flood waits halfway until both clients have the first half.
 */
async function killDuringFlood(dir: string, server: { run: WebmuxRun; url: string }): Promise<{ s: SessionInfo; browser: TerminalClient; cli: OuterTerminal }> {
  const trigger = join(dir, "second-half");
  const s = await create(server.url, [...SHELL, "-c", `sleep 0.5; seq 1 1000000; while [ ! -e ${trigger} ]; do sleep 0.05; done; seq 1000001 2000000; echo ALL-DONE; exec sleep 1000`]);
  const browser = await connect(server.url, s.id, { client: "browser-1" });
  const cli = new OuterTerminal(["attach", s.id], { WEBMUX_URL: server.url, WEBMUX_TOKEN: TOKEN }, { cols: 80, rows: 24 });
  outers.push(cli);
  await waitFor(() => browser.output.includes("\n1000000\r"), { timeout: 60_000, message: "the first half at the browser client" });
  await cli.waitForOutput("\n1000000\r", { timeout: 60_000 });
  const half = browser.offset;
  writeFileSync(trigger, "");
  await waitFor(() => browser.offset > half + 100_000, { timeout: 30_000, message: "the second half under way" });
  expect(await killHard(server.run)).toBe(null);
  return { s, browser, cli };
}

describe("sessions in the session host", () => {
  // The host runs on the first server's runtime; the second server may run on the other one.
  it.each<[Runtime, Runtime]>([
    ["node", "node"],
    ["bun", "node"],
    ["node", "bun"],
  ])("kill -9 of the server (%s) during seq 1 2000000: a new server (%s) has the same session, and a browser-style client and webmux attach resume with exactly the missing bytes", async (firstRuntime, secondRuntime) => {
    const dir = dataDir();
    const first = await serve(dir, "0", firstRuntime);
    const port = new URL(first.url).port;
    const { s, browser, cli } = await killDuringFlood(dir, first);
    await browser.closed();
    const beforeBytes = Buffer.concat([browser.snapshots[0] ?? Buffer.alloc(0), browser.output]);
    const resumeAt = { generation: browser.generation!, offset: browser.offset };
    expect(beforeBytes.length).toBe(resumeAt.offset);
    expect(beforeBytes.includes("ALL-DONE")).toBe(false);

    // The session ran on while no server did: the host's ring grew.
    await waitFor(async () => ((await hostSessions(dir))[0]?.run?.end ?? 0) > resumeAt.offset, { message: "output while no server runs" });

    const second = await serve(dir, port, secondRuntime);
    const listed = await sessions(second.url);
    expect(listed.map((x) => [x.id, x.generation, x.status])).toEqual([[s.id, s.generation, "running"]]);
    expect(listed[0]!.pid).toBe(s.pid);
    expect(processExists(s.pid!)).toBe(true);

    const resumed = await connect(second.url, s.id, { client: "browser-1", resume: resumeAt });
    await resumed.waitForFrames((f) => f.some((x) => x.type === "status"));
    expect(resumed.position).toMatchObject({ mode: "append", start: resumeAt.offset, generation: s.generation });
    await waitFor(() => resumed.output.includes("ALL-DONE"), { timeout: 120_000, message: "the end of the flood" }).catch(async (err) => {
      const kinds = resumed.frames.filter((f) => f.type !== "output").map((f) => f.type + (f.type === "position" ? JSON.stringify(f.position) : ""));
      throw new Error(`${err.message}; frames ${kinds.join(",")}; output ${resumed.output.length}, tail ${JSON.stringify(resumed.output.subarray(-30).toString())}; client at ${resumed.offset}, host ${JSON.stringify((await hostSessions(dir))[0]?.run)}`);
    });
    const buffer = await api(second.url, `/api/sessions/${s.id}/buffer`);
    expect(buffer.headers.get("x-webmux-start")).toBe("0");
    expect(buffer.headers.get("x-webmux-generation")).toBe(s.generation);
    const all = Buffer.from(await buffer.arrayBuffer());
    const held = Buffer.concat([beforeBytes, resumed.output]);
    // Nothing lost, nothing doubled: byte for byte the session's output.
    expect(held.length).toBe(all.length);
    expect(held.equals(all)).toBe(true);
    expectSeqLines(held.toString("latin1"), 2_000_000);

    // webmux attach reconnected on its own to the new server at the same address and resumed.
    await cli.waitForOutput("ALL-DONE", { timeout: 120_000 });
    expect(cli.exit).toBe(null);
    expectSeqLines(cli.output, 2_000_000);
  }, 240_000);

  it.runIf(fdPassingSupported())("kill -9 of the server during seq 1 2000000 when the host serves the streams: a browser-style client and webmux attach never drop, and hold the session's output byte for byte", async () => {
    const dir = dataDir();
    const first = await serve(dir, "0", "node", "handed");
    const { s, browser, cli } = await killDuringFlood(dir, first);
    // No server runs, and the flood goes on reaching both clients through the host.
    await waitFor(() => browser.output.includes("ALL-DONE"), { timeout: 120_000, message: "the end of the flood at the browser client" });
    await cli.waitForOutput("ALL-DONE", { timeout: 120_000 });
    expect(browser.closeCode).toBe(null);
    expect(cli.exit).toBe(null);

    const second = await serve(dir, "0", "node", "handed");
    const listed = await sessions(second.url);
    expect(listed.map((x) => [x.id, x.generation, x.status, x.clients])).toEqual([[s.id, s.generation, "running", 2]]);
    const buffer = await api(second.url, `/api/sessions/${s.id}/buffer`);
    expect(buffer.headers.get("x-webmux-start")).toBe("0");
    const all = Buffer.from(await buffer.arrayBuffer());
    const held = receivedFromStart(browser);
    expect(held.length).toBe(all.length);
    expect(held.equals(all)).toBe(true);
    expectSeqLines(held.toString("latin1"), 2_000_000);
    expectSeqLines(cli.output, 2_000_000);
  }, 240_000);

  it.each<[Runtime]>([["node"], ["bun"]])("SIGTERM of the server (%s) leaves the sessions running and says how to end them; webmux stop ends them and the host", async (runtime) => {
    const dir = dataDir();
    const first = await serve(dir, "0", runtime);
    const a = await create(first.url, [...SHELL, "-c", "echo A; exec sleep 1000"]);
    const b = await create(first.url, [...SHELL, "-c", "trap '' HUP; echo B; while :; do sleep 1; done"]);
    first.run.proc.kill("SIGTERM");
    expect(await first.run.exit).toBe(0);
    expect(first.run.err()).toContain(`2 sessions keep running in the session host; end them with: webmux stop --data-dir ${dir}`);
    expect(processExists(a.pid!)).toBe(true);
    expect(processExists(b.pid!)).toBe(true);
    const held = await hostSessions(dir);
    expect(held.map((x) => x.id).sort()).toEqual([a.id, b.id].sort());
    const hostPid = (await HostConnection.connect(hostPaths(dir), { role: PeerRole.COMMAND, build: "test" }).then((c) => (c.close(), c.welcome.pid)));

    const stop = runWebmux(["stop", "--data-dir", dir]);
    expect(await stop.exit).toBe(0);
    expect(stop.out()).toContain("ended 2 sessions");
    // b ignores SIGHUP: it got SIGKILL after the grace
    expect(processExists(a.pid!)).toBe(false);
    expect(processExists(b.pid!)).toBe(false);
    expect(processExists(hostPid)).toBe(false);
  }, 60_000);

  it.each(STREAMS)("a submission the host received before the server was killed is written once, and the next server answers its state (streams %s)", async (streams) => {
    const dir = dataDir();
    const trigger = join(dir, "trigger");
    const sink = join(dir, "sink");
    const first = await serve(dir, "0", "node", streams);
    // Reads nothing until the trigger exists, so the submission's bytes wait in the PTY (a raw
    // terminal takes 4 KiB): the host holds the record `received` while the server dies.
    const s = await create(first.url, [...SHELL, "-c", `stty raw -echo; echo READY; while [ ! -e ${trigger} ]; do sleep 0.05; done; exec cat > ${sink}`]);
    const c1 = await connect(first.url, s.id, { client: "compose-1" });
    await c1.waitForText("READY");
    const marker = "DRAFT-MARKER-7f3a";
    c1.submit("submission-1", `${"x".repeat(64 * 1024)}${marker}`);
    await waitFor(() => c1.submitStatuses.some((st) => st.id === "submission-1"), { message: "received" });
    expect(c1.submitStatuses.map((st) => st.state)).toEqual(["received"]);
    await waitFor(async () => (await hostSessions(dir))[0]?.submissions.find((x) => x.id === "submission-1")?.state === "received", { message: "the host's record" });
    await killHard(first.run);

    writeFileSync(trigger, "");
    await waitFor(() => existsSync(sink) && readFileSync(sink, "latin1").includes(marker), { message: "the program reads the draft" });
    await waitFor(async () => (await hostSessions(dir))[0]?.submissions.find((x) => x.id === "submission-1")?.state === "written", { message: "written in the host" });

    const second = await serve(dir, new URL(first.url).port, "node", streams);
    const c2 = await connect(second.url, s.id, { client: "compose-1", resume: { generation: c1.generation!, offset: c1.offset } });
    await c2.waitForFrames((f) => f.some((x) => x.type === "status"));
    c2.query(["submission-1"]);
    await waitFor(() => c2.submitStatuses.find((st) => st.id === "submission-1"), { message: "the state after the restart" });
    expect(c2.submitStatuses.find((st) => st.id === "submission-1")!.state).toBe("written");
    // The compose box would resend a draft only when its state is missing; sending it again anyway is answered from the log.
    c2.submit("submission-1", `${"x".repeat(64 * 1024)}${marker}`);
    await waitFor(() => c2.submitStatuses.filter((st) => st.id === "submission-1").length === 2, { message: "the repeat's answer" });
    expect(c2.submitStatuses.filter((st) => st.id === "submission-1").map((st) => st.state)).toEqual(["written", "written"]);
    const seen = readFileSync(sink, "latin1");
    expect(seen.split(marker).length - 1).toBe(1);
  }, 90_000);

  it.each(STREAMS)("kill -9 of the host: its shells end with it, the server removes their sessions (4404), and the next session starts a new host (streams %s)", async (streams) => {
    const dir = dataDir();
    const { url } = await serve(dir, "0", "node", streams);
    const a = await create(url, SHELL);
    const b = await create(url, SHELL);
    const viewer = await connect(url, a.id);
    await viewer.waitForFrames((f) => f.some((x) => x.type === "status"));
    const hostPid = await HostConnection.connect(hostPaths(dir), { role: PeerRole.COMMAND, build: "test" }).then((c) => (c.close(), c.welcome.pid));
    expect(hostPid).not.toBe(a.pid);
    process.kill(hostPid, "SIGKILL");
    // The PTYs' masters closed with the host: the kernel hangs up their shells.
    await waitFor(() => !processExists(a.pid!) && !processExists(b.pid!), { timeout: 20_000, message: "no orphaned shell" });
    if (streams === "relay") expect(await viewer.closed()).toBe(4404);
    else {
      // The host served the stream: its death drops the connection, and the reconnect hears 4404.
      expect(await viewer.closed()).toBe(1006);
      await waitFor(async () => (await sessions(url)).length === 0, { message: "the sessions removed" });
      const again = await TerminalClient.connect(url, a.id, { token: TOKEN }).catch(() => null);
      if (again) clients.push(again);
      expect(await again?.closed()).toBe(4404);
    }
    await waitFor(async () => (await sessions(url)).length === 0, { message: "the sessions removed" });

    const c = await create(url, [...SHELL, "-c", "echo NEW-HOST-$((6*7)); exec sleep 1000"]);
    expect(c.status).toBe("running");
    const newHost = await HostConnection.connect(hostPaths(dir), { role: PeerRole.COMMAND, build: "test" }).then((x) => (x.close(), x.welcome.pid));
    expect(newHost).not.toBe(hostPid);
    const viewer2 = await connect(url, c.id);
    await viewer2.waitForText("NEW-HOST-42");
  }, 90_000);

  it("a host of another protocol version that cannot hand its sessions over is kept, never killed: the server says so in one line and does not start", async () => {
    const dir = dataDir();
    const service = new HostedSessions(spawnPty);
    // An older build's host, played in-process: it speaks protocol HOST_PROTOCOL - 1.
    const old = new SessionHost({ dataDir: dir, build: "webmux 0.0.1", service, protocol: HOST_PROTOCOL - 1 });
    expect(await old.start()).toEqual({ status: "listening" });
    try {
      const fake = { send: () => {}, emit: () => {}, role: PeerRole.SERVER, pid: process.pid, build: "test", socket: null as never };
      service.handle(fake, "spawn", {
        ref: 1,
        generation: "old.1",
        bufferBytes: 1024,
        spawn: { command: ["sleep", "1000"], cwd: "/", env: { PATH: process.env.PATH! }, cols: 80, rows: 24 },
        meta: { id: "oldsess1", command: ["sleep", "1000"], cwd: "/", env: {}, createdAt: Date.now(), title: null, hybrid: false },
      }, new Uint8Array(0));
      const pid = (await hostSessionsOf(service))[0]!.run!.pid;
      const run = runWebmux(["serve", "--port", "0", "--data-dir", dir, "--token", TOKEN, "--no-qr"]);
      expect(await run.exit).toBe(1);
      const lines = run.err().trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`is webmux 0.0.1 (host protocol ${HOST_PROTOCOL - 1})`);
      expect(lines[0]).toContain("could not hand its sessions over (this session host (webmux 0.0.1) cannot hand its sessions over)");
      expect(lines[0]).toContain("its sessions keep running there");
      expect(processExists(pid)).toBe(true);
      expect(service.runningCount()).toBe(1);
    } finally {
      await old.stop("test over");
    }
  }, 60_000);
});

async function hostSessionsOf(service: HostedSessions): Promise<AdoptedSession[]> {
  const fake = { send: () => {}, emit: () => {}, role: PeerRole.COMMAND, pid: process.pid, build: "test", socket: null as never };
  return ((await service.handle(fake, "list", null, new Uint8Array(0))).result as { sessions: AdoptedSession[] }).sessions;
}
