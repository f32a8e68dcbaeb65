import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runWebmux, stopWebmuxProcesses } from "../testing/webmux-process.ts";
import { waitFor } from "../testing/wait.ts";
import { HostConnection, HostRefusedError, HostUnavailableError, probeHost } from "./host-client.ts";
import { hostPaths, processExists } from "./host-dir.ts";
import { encodeHostFrame, HOST_PROTOCOL, PeerRole, Refusal } from "./protocol.ts";
import { EmptyService, SessionHost } from "./session-host.ts";
import { connectHost, startHost, webmuxArgv } from "./spawn-host.ts";

const BUILD = "webmux test";
const dirs: string[] = [];
const hostPids = new Set<number>();
const hosts: SessionHost[] = [];

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "webmux-host-"));
  dirs.push(dir);
  return dir;
}

async function connectAs(dir: string, role: PeerRole = PeerRole.SERVER, protocol?: number): Promise<HostConnection> {
  const conn = await HostConnection.connect(hostPaths(dir), { role, build: BUILD, protocol });
  hostPids.add(conn.welcome.pid);
  return conn;
}

/** Start `command` in the host as run 1 of session `id`, as a server would. */
async function spawnRun(server: HostConnection, dir: string, id: string, command: string[]): Promise<void> {
  await server.request("spawn", {
    ref: 1,
    generation: "test.1",
    bufferBytes: 1024,
    spawn: { command, cwd: dir, env: { PATH: process.env.PATH! }, cols: 80, rows: 24 },
    meta: { id, command, cwd: dir, env: {}, createdAt: Date.now(), title: null, hybrid: false },
  });
}

/** `webmux host` run in the foreground for `dir`, its stderr collected. */
function foregroundHost(dir: string): { proc: ChildProcess; stderr: () => string; exit: Promise<number | null> } {
  const [file, ...args] = webmuxArgv();
  const proc = spawn(file!, [...args, "host", "--data-dir", dir], { stdio: ["ignore", "ignore", "pipe"] });
  let err = "";
  proc.stderr!.on("data", (d) => (err += d));
  const exit = new Promise<number | null>((r) => proc.once("exit", (code) => r(code)));
  return { proc, stderr: () => err, exit };
}

/** The session id and process group of a process (fields 5 and 6 of /proc/PID/stat). */
function sessionOf(pid: number): { pgid: number; sid: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { pgid: Number(fields[2]), sid: Number(fields[3]) };
}

afterEach(async () => {
  for (const host of hosts.splice(0)) await host.stop("test over");
  for (const pid of hostPids) if (pid !== process.pid && processExists(pid)) process.kill(pid, "SIGKILL");
  hostPids.clear();
  stopWebmuxProcesses();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("session host process", () => {
  it("is started detached, listens on a private socket, and `webmux stop` ends it", async () => {
    const dir = dataDir();
    const conn = await connectHost(dir, { role: PeerRole.SERVER, build: BUILD });
    const pid = conn.welcome.pid;
    hostPids.add(pid);
    expect(pid).not.toBe(process.pid);
    expect(conn.welcome.protocol).toBe(HOST_PROTOCOL);
    // Its own session and process group: a terminal's Ctrl-C or hang-up of the server does not reach it.
    expect(sessionOf(pid).sid).toBe(pid);
    expect(sessionOf(pid).sid).not.toBe(sessionOf(process.pid).sid);
    const paths = hostPaths(dir);
    expect(statSync(paths.dir).mode & 0o777).toBe(0o700);
    expect(statSync(paths.socket).mode & 0o777).toBe(0o600);
    expect(statSync(paths.secret).mode & 0o777).toBe(0o600);
    expect(readFileSync(paths.log, "utf8")).toContain(`pid ${pid}`);

    const stop = runWebmux(["stop", "--data-dir", dir]);
    expect(await stop.exit).toBe(0);
    expect(stop.out()).toContain(`ended 0 sessions; the session host (pid ${pid}) exited`);
    expect(processExists(pid)).toBe(false);
    await expect(HostConnection.connect(paths, { role: PeerRole.COMMAND, build: BUILD })).rejects.toBeInstanceOf(HostUnavailableError);
    const again = runWebmux(["stop", "--data-dir", dir]);
    expect(await again.exit).toBe(0);
    expect(again.out()).toContain("no session host runs");
  });

  it("two servers starting at once get one host", async () => {
    const dir = dataDir();
    const [a, b] = await Promise.all([
      startHost(dir, { role: PeerRole.COMMAND, build: BUILD }),
      startHost(dir, { role: PeerRole.COMMAND, build: BUILD }),
    ]);
    hostPids.add(a.welcome.pid);
    hostPids.add(b.welcome.pid);
    expect(a.welcome.pid).toBe(b.welcome.pid);
    expect(a.welcome.hostId).toBe(b.welcome.hostId);
    // The loser said so in the log and left.
    await waitFor(() => readFileSync(hostPaths(dir).log, "utf8").includes("already holds the sessions"), { message: "the second host's note" });
    a.close();
    b.close();
  });

  it("starts under another runtime when asked (a Bun host for a Node server)", async () => {
    const bun = join(import.meta.dirname, "..", "..", "node_modules", ".bin", "bun");
    expect(webmuxArgv(bun)[1]).toMatch(/server\/main\.ts$/);
    const dir = dataDir();
    const conn = await connectHost(dir, { role: PeerRole.SERVER, build: BUILD }, { runtime: bun });
    hostPids.add(conn.welcome.pid);
    expect(conn.welcome.runtime).toMatch(/^bun /);
    const { result } = await conn.request("stop");
    expect(result).toEqual({ ended: 0 });
  });

  it("a socket path longer than Unix allows still works (through the directory's descriptor)", async () => {
    let dir = dataDir();
    while (join(dir, "host", "host.sock").length < 130) dir = join(dir, "a-rather-long-directory-name");
    mkdirSync(dir, { recursive: true });
    const conn = await connectHost(dir, { role: PeerRole.SERVER, build: BUILD });
    hostPids.add(conn.welcome.pid);
    expect(statSync(hostPaths(dir).socket).isSocket()).toBe(true);
    await conn.request("stop");
  });

  it("a host that takes connections but does not answer (busy, stopped) keeps its socket and its sessions", async () => {
    const dir = dataDir();
    const server = await connectHost(dir, { role: PeerRole.SERVER, build: BUILD });
    const pid = server.welcome.pid;
    hostPids.add(pid);
    const socket = hostPaths(dir).socket;
    const inode = statSync(socket).ino;
    process.kill(pid, "SIGSTOP");
    try {
      // The kernel still takes connections for a stopped listener; only its answer never comes.
      const second = foregroundHost(dir);
      hostPids.add(second.proc.pid!);
      const code = await second.exit;
      expect(second.stderr()).toContain("already holds the sessions");
      expect(code).toBe(0);
      expect(statSync(socket).ino).toBe(inode);
    } finally {
      process.kill(pid, "SIGCONT");
    }
    const command = await connectAs(dir, PeerRole.COMMAND);
    expect(command.welcome.pid).toBe(pid);
    command.close();
    await server.request("stop");
  }, 30_000);

  it("a host started while the old one ends (`webmux stop` under way) takes over once the old one is gone", async () => {
    const dir = dataDir();
    const paths = hostPaths(dir);
    const first = await connectHost(dir, { role: PeerRole.SERVER, build: BUILD });
    hostPids.add(first.welcome.pid);
    await first.request("adopt");
    // A program that ignores the hang-up keeps the old host ending until its SIGKILL, 3 s later.
    // It leaves a file once the trap is set: a hang-up before that would end it at once.
    const armed = join(dir, "armed");
    const command = ["sh", "-c", `trap '' HUP; : > ${armed}; while :; do sleep 0.05; done`];
    await spawnRun(first, dir, "stubborn", command);
    await waitFor(() => existsSync(armed), { message: "the HUP trap set" });
    const stopping = first.request("stop").catch(() => null);
    const refusal = async () => {
      try {
        (await HostConnection.connect(paths, { role: PeerRole.COMMAND, build: BUILD })).close();
        return null;
      } catch (err) {
        return err instanceof HostRefusedError ? err.reason : null;
      }
    };
    await waitFor(async () => (await refusal()) === Refusal.ENDING, { message: "the old host ending" });
    const next = await startHost(dir, { role: PeerRole.COMMAND, build: BUILD });
    hostPids.add(next.welcome.pid);
    expect(next.welcome.pid).not.toBe(first.welcome.pid);
    expect(processExists(first.welcome.pid)).toBe(false);
    await stopping;
    await next.request("stop");
  }, 30_000);

  it("a stale socket left by a killed host is replaced by the next host", async () => {
    const dir = dataDir();
    const first = await connectHost(dir, { role: PeerRole.SERVER, build: BUILD });
    const pid = first.welcome.pid;
    hostPids.add(pid);
    process.kill(pid, "SIGKILL");
    await waitFor(() => !processExists(pid), { message: "host killed" });
    expect(statSync(hostPaths(dir).socket).isSocket()).toBe(true);
    const second = await connectHost(dir, { role: PeerRole.SERVER, build: BUILD });
    hostPids.add(second.welcome.pid);
    expect(second.welcome.pid).not.toBe(pid);
    await second.request("stop");
  });
});

describe("session host: who may connect", () => {
  async function inProcessHost(firstServerWaitMs = 60_000): Promise<{ dir: string; host: SessionHost; exits: string[] }> {
    const dir = dataDir();
    const exits: string[] = [];
    const host = new SessionHost({ dataDir: dir, build: BUILD, service: new EmptyService(), firstServerWaitMs, onExit: (reason) => exits.push(reason) });
    hosts.push(host);
    expect(await host.start()).toEqual({ status: "listening" });
    return { dir, host, exits };
  }

  it("refuses a wrong secret and another protocol version, saying which version it speaks", async () => {
    const { dir } = await inProcessHost();
    const paths = hostPaths(dir);
    const secret = readFileSync(paths.secret, "utf8");
    writeFileSync(paths.secret, "not-the-secret", { mode: 0o600 });
    const wrong = await HostConnection.connect(paths, { role: PeerRole.SERVER, build: BUILD }).catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(HostRefusedError);
    expect((wrong as HostRefusedError).reason).toBe(Refusal.SECRET);
    writeFileSync(paths.secret, secret, { mode: 0o600 });

    const newer = await connectAs(dir, PeerRole.SERVER, HOST_PROTOCOL + 1).catch((e: unknown) => e);
    expect(newer).toBeInstanceOf(HostRefusedError);
    expect(newer).toMatchObject({ reason: Refusal.PROTOCOL, protocol: HOST_PROTOCOL, build: BUILD });
    // Neither took the server's place.
    const server = await connectAs(dir);
    expect(server.welcome.protocol).toBe(HOST_PROTOCOL);
    server.close();
  });

  it("a secret file readable by others is not trusted", async () => {
    const { dir } = await inProcessHost();
    const paths = hostPaths(dir);
    const secret = readFileSync(paths.secret, "utf8");
    rmSync(paths.secret);
    writeFileSync(paths.secret, secret, { mode: 0o644 });
    const refused = await connectAs(dir).catch((e: unknown) => e);
    expect(refused).toMatchObject({ reason: Refusal.SECRET });
  });

  it("one server at a time; commands come and go beside it", async () => {
    const { dir } = await inProcessHost();
    const server = await connectAs(dir);
    const second = await connectAs(dir).catch((e: unknown) => e);
    expect(second).toMatchObject({ reason: Refusal.BUSY });
    expect((second as Error).message).toContain(`pid ${process.pid}`);
    const command = await connectAs(dir, PeerRole.COMMAND);
    command.close();
    server.close();
  });

  it("drops a peer that sends anything but a hello, or a frame over the hello's size limit, and keeps serving", async () => {
    const { dir } = await inProcessHost();
    const address = hostPaths(dir).socket;
    const closedAfter = (bytes: Uint8Array) =>
      new Promise<void>((resolve) => {
        const s = connect(address, () => s.write(bytes));
        s.on("close", () => resolve());
        s.on("error", () => {});
      });
    await closedAfter(encodeHostFrame({ type: "input", ref: 1, flags: 0, data: new Uint8Array(4) }));
    await closedAfter(Uint8Array.of(0x7f, 0xff, 0xff, 0xff, 0x01));
    await closedAfter(Uint8Array.of(0x00, 0x00, 0x00, 0x02, 0x01, 0x00));
    expect(await probeHost(hostPaths(dir))).toEqual({ pid: process.pid });
  });

  it("exits by itself when the server leaves and it holds nothing", async () => {
    const { dir, exits } = await inProcessHost();
    const command = await connectAs(dir, PeerRole.COMMAND);
    command.close();
    const server = await connectAs(dir);
    expect(exits).toEqual([]);
    server.close();
    await waitFor(() => exits.length === 1, { message: "host exit" });
    expect(exits[0]).toContain("the server left");
    await expect(probeHost(hostPaths(dir))).resolves.toBeNull();
  });

  it("exits by itself when no server comes after its start, unless one does", async () => {
    const idle = await inProcessHost(300);
    await waitFor(() => idle.exits.length === 1, { message: "idle host exit" });
    expect(idle.exits[0]).toBe("no server connected");
    const used = await inProcessHost(300);
    const server = await connectAs(used.dir);
    await new Promise((r) => setTimeout(r, 600)); // past its wait: a connected server keeps it
    expect(used.exits).toEqual([]);
    server.close();
  });

  it("`webmux host` keeps a running session after its server left, and exits by itself once that session ended", async () => {
    const dir = dataDir();
    const { proc, stderr, exit } = foregroundHost(dir);
    await waitFor(() => probeHost(hostPaths(dir)), { timeout: 20_000, message: "host listening" });
    const trigger = join(dir, "end-now");
    const command = ["sh", "-c", `while [ ! -e ${trigger} ]; do sleep 0.05; done`];
    const server = await connectAs(dir);
    await server.request("adopt");
    await spawnRun(server, dir, "lastsess", command);
    server.close();
    await waitFor(() => stderr().includes(`server pid ${process.pid} disconnected`), { message: "the server's leaving logged" });
    // A running program is worth keeping: the host stays for the next server.
    expect(await probeHost(hostPaths(dir))).toEqual({ pid: proc.pid });
    writeFileSync(trigger, "");
    expect(await exit).toBe(0);
    expect(stderr()).toContain("exiting: the last session ended and no server is connected");
  });

  it("the foreground `webmux host` ends on SIGTERM and ignores SIGHUP", async () => {
    const dir = dataDir();
    const { proc, stderr, exit } = foregroundHost(dir);
    const probe = await waitFor(() => probeHost(hostPaths(dir)), { timeout: 20_000, message: "host listening" });
    expect(probe.pid).toBe(proc.pid);
    proc.kill("SIGHUP");
    await waitFor(() => stderr().includes("SIGHUP ignored"), { message: "SIGHUP logged" });
    expect(await probeHost(hostPaths(dir))).toEqual({ pid: proc.pid });
    proc.kill("SIGTERM");
    expect(await exit).toBe(0);
    expect(stderr()).toContain("stopping: SIGTERM");
  });
});
