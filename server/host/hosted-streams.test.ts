/**
 * The session host serves the terminal streams (docs/design.md § The session host serves the
 * streams): real `webmux serve` processes with their real host, real bash PTYs, real WebSockets.
 * The server hands each upgrade of a plain session to the host; so the stream goes on when the
 * server is killed, its list still shows who controls, and a deleted session closes it with 4404.
 */
import { mkdtempSync } from "node:fs";
import { createServer, connect as connectTcp, type AddressInfo, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { SessionInfo } from "../contract/types.ts";
import { TerminalClient } from "../testing/terminal-client.ts";
import { receivedFromStart } from "../testing/stream-check.ts";
import { fetchDebugStats } from "../testing/debug-stats.ts";
import { waitFor } from "../testing/wait.ts";
import { endDataDirs, listeningUrl, NODE_WEBMUX, runWebmux, serverApi, type WebmuxRun } from "../testing/webmux-process.ts";
import { fdPassingSupported, socketFd } from "./fd-channel.ts";
import { hostPaths, processExists, readSecret } from "./host-dir.ts";
import { FdChannel } from "./fd-channel.ts";

const TOKEN = "host-streams-token-0123456789";
const SHELL = ["bash", "--norc", "--noprofile"];

const dirs: string[] = [];
const clients: TerminalClient[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
  await endDataDirs(dirs);
});

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "webmux-streams-"));
  dirs.push(dir);
  return dir;
}

async function serve(dir: string, env: Record<string, string> = {}, flags: string[] = []): Promise<{ run: WebmuxRun; url: string }> {
  const run = runWebmux(["serve", "--port", "0", "--data-dir", dir, "--token", TOKEN, "--no-qr", ...flags], { runtime: NODE_WEBMUX, isolated: true, env });
  return { run, url: await listeningUrl(run) };
}

const { api, sessions, create } = serverApi(TOKEN);

async function connect(url: string, id: string, options: ConstructorParameters<typeof TerminalClient>[2] = {}): Promise<TerminalClient> {
  const c = await TerminalClient.connect(url, id, { token: TOKEN, ...options });
  clients.push(c);
  return c;
}

/** Terminal connections the server itself serves. */
async function serverConnections(url: string): Promise<number> {
  return (await fetchDebugStats(url, TOKEN)).terminalConnections;
}

async function listed(url: string, id: string): Promise<SessionInfo> {
  const found = (await sessions(url)).find((s) => s.id === id);
  if (!found) throw new Error(`session ${id} not listed`);
  return found;
}

/** A TCP connection on loopback: `fd` is one end's descriptor; `ended` settles when the other end sees it closed by every holder. */
async function socketPair(): Promise<{ fd: number; closeOurs(): void; ended: Promise<void> }> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const accepted = new Promise<Socket>((r) => server.once("connection", r));
  const ours = connectTcp((server.address() as AddressInfo).port, "127.0.0.1");
  await new Promise<void>((r) => ours.once("connect", r));
  const theirs = await accepted;
  theirs.on("error", () => {});
  theirs.resume();
  const ended = new Promise<void>((r) => theirs.once("close", () => r())).finally(() => server.close());
  return { fd: socketFd(ours)!, closeOurs: () => ours.destroy(), ended };
}

describe.runIf(fdPassingSupported())("the session host serves the terminal streams", () => {
  it("a plain session's stream is served by the host: echo, seat and clients in the server's list, grid changes, and the stream goes on when the server is killed", async () => {
    const dir = dataDir();
    const first = await serve(dir);
    const s = await create(first.url, { command: SHELL });
    const driver = await connect(first.url, s.id, { client: "driver-1", label: "driver" });
    const watcher = await connect(first.url, s.id, { client: "watcher-1", label: "watcher" });
    driver.type("echo hand$((40+2))\r");
    await driver.waitForText("hand42");
    await watcher.waitForText("hand42");
    // The server serves none of them itself, and its list says who controls and how many watch.
    expect(await serverConnections(first.url)).toBe(0);
    await waitFor(async () => {
      const info = await listed(first.url, s.id);
      return info.clients === 2 && info.controller?.clientId === "driver-1";
    }, { message: "the seat in the server's list" });
    driver.resize(100, 30);
    await waitFor(async () => {
      const info = await listed(first.url, s.id);
      return info.cols === 100 && info.rows === 30;
    }, { message: "the grid in the server's list" });
    await watcher.waitForFrames((f) => f.some((x) => x.type === "control" && x.control.cols === 100 && x.control.rows === 30));

    // kill -9 of the server: the host keeps serving the very same connections.
    first.run.proc.kill("SIGKILL");
    await first.run.exit;
    driver.type("echo still$((1+1))\r");
    await driver.waitForText("still2");
    await watcher.waitForText("still2");
    expect([driver.closeCode, watcher.closeCode]).toEqual([null, null]);

    // A new server adopts the host, lists the seat it serves, and hands new streams to it too.
    const second = await serve(dir);
    const info = await listed(second.url, s.id);
    expect(info).toMatchObject({ generation: s.generation, pid: s.pid, clients: 2, cols: 100, rows: 30 });
    expect(info.controller?.clientId).toBe("driver-1");
    const late = await connect(second.url, s.id, { client: "late-1" });
    await late.waitForText("still2");
    await waitFor(async () => (await listed(second.url, s.id)).clients === 3, { message: "three clients" });
    // What every client holds is the session's output, byte for byte.
    driver.type("echo end-of-test\r");
    await driver.waitForText(/end-of-test\r\n/);
    const buffer = Buffer.from(await (await api(second.url, `/api/sessions/${s.id}/buffer`)).arrayBuffer());
    await waitFor(() => receivedFromStart(driver).length >= buffer.length, { message: "the driver caught up" });
    expect(receivedFromStart(driver).subarray(0, buffer.length).equals(buffer)).toBe(true);

    // Deleting the session closes its streams in the host with 4404.
    const closed = driver.closed();
    expect((await api(second.url, `/api/sessions/${s.id}`, { method: "DELETE" })).status).toBe(204);
    expect(await closed).toBe(4404);
    expect(await watcher.closed()).toBe(4404);
    await waitFor(() => !processExists(s.pid!), { message: "the shell ended" });
  }, 120_000);

  it("a replay that needs a snapshot gets the server mirror's, as of its position; with no server a resync falls back to the raw bytes", async () => {
    const dir = dataDir();
    const first = await serve(dir);
    const s = await create(first.url, { command: SHELL });
    const driver = await connect(first.url, s.id, { client: "driver-1" });
    driver.type("printf 'snap-%s\\n' one two three\r");
    await driver.waitForText("snap-three");
    // A resize makes the raw output unfit for a fresh screen: a fresh attach gets a made snapshot.
    driver.resize(90, 20);
    await waitFor(async () => (await listed(first.url, s.id)).cols === 90, { message: "the resize" });
    driver.type("echo after-resize\r");
    await driver.waitForText("\rafter-resize\r\n");
    const fresh = await connect(first.url, s.id, { client: "fresh-1", screen: { cols: 90, rows: 20 } });
    await fresh.waitForFrames((f) => f.some((x) => x.type === "status"));
    expect(fresh.position).toMatchObject({ mode: "reset", truncated: false });
    expect(fresh.snapshots).toHaveLength(1);
    // Made by the server's mirror, not the raw bytes (what the host falls back to without a server).
    const raw = Buffer.from(await (await api(first.url, `/api/sessions/${s.id}/buffer`)).arrayBuffer());
    expect(raw.length).toBe(fresh.position!.end);
    expect(Buffer.from(fresh.snapshots[0]!).equals(raw)).toBe(false);
    const lines = (await fresh.screenLines()).join("\n");
    expect(lines).toContain("snap-three");
    expect(lines).toContain("after-resize");
    // The snapshot is the state as of the position's end: the live bytes after it carry on exactly.
    fresh.type("echo and-then\r");
    fresh.takeControl();
    fresh.type("echo typed-after\r");
    await fresh.waitForText("typed-after");
    expect((await fresh.screenLines()).join("\n")).toContain("typed-after");

    // No server: the host cannot ask for a snapshot; a resync gets the raw bytes instead, and works.
    first.run.proc.kill("SIGKILL");
    await first.run.exit;
    const before = fresh.snapshots.length;
    fresh.resync();
    await waitFor(() => fresh.snapshots.length > before, { message: "the resync's replay" });
    const fallback = Buffer.from(fresh.snapshots.at(-1)!);
    expect(fallback.subarray(0, raw.length).equals(raw)).toBe(true);
    expect(fallback.length).toBe(fresh.position!.end);
    fresh.type("echo still-live\r");
    await fresh.waitForText("still-live");
  }, 90_000);

  it("a revoked token's stream served by the host closes with 1008, also one a restarted server learned of; other streams go on", async () => {
    const dir = dataDir();
    const first = await serve(dir, {}, ["--open-api"]);
    const s = await create(first.url, { command: SHELL });
    const made = await api(first.url, "/api/tokens", { method: "POST", json: { name: "watcher", capabilities: ["terminal:read"] } });
    const { token, token_info } = (await made.json()) as { token: string; token_info: { id: string } };
    const watcher = new TerminalClient(first.url, s.id, { token });
    clients.push(watcher);
    const before = await connect(first.url, s.id, { client: "driver-1" });
    before.type("echo one$((0+1))\r");
    await watcher.waitForText("one1");
    // The server that handed it is killed; the next one learns of the stream from the host and still guards it.
    first.run.proc.kill("SIGKILL");
    await first.run.exit;
    const second = await serve(dir);
    const closed = watcher.closed();
    expect((await api(second.url, `/api/tokens/${token_info.id}`, { method: "DELETE" })).status).toBe(204);
    expect(await closed).toBe(1008);
    expect(watcher.closeReason).toBe("credential revoked");
    before.type("echo two$((1+1))\r");
    await before.waitForText("two2");
    expect(before.closeCode).toBe(null);
  }, 90_000);

  it("a token's stream served by the host closes with 1008 when the token expires, also while no server runs; other streams go on", async () => {
    const dir = dataDir();
    const first = await serve(dir, {}, ["--open-api"]);
    const s = await create(first.url, { command: SHELL });
    /** Long enough to connect and kill the server first on a busy machine; short enough to wait for. */
    const expiresInS = 8;
    const made = await api(first.url, "/api/tokens", { method: "POST", json: { name: "short-lived", capabilities: ["terminal:read"], expires_in: expiresInS } });
    const { token } = (await made.json()) as { token: string };
    const watcher = new TerminalClient(first.url, s.id, { token });
    clients.push(watcher);
    const driver = await connect(first.url, s.id, { client: "driver-1" });
    driver.type("echo one$((0+1))\r");
    await watcher.waitForText("one1");
    const closed = watcher.closed();
    first.run.proc.kill("SIGKILL");
    await first.run.exit;
    // Both streams outlived their server: the host holds them, and only the host can end the watcher's now.
    expect(watcher.closeCode).toBe(null);
    expect(await closed).toBe(1008);
    expect(watcher.closeReason).toBe("credential expired");
    driver.type("echo two$((1+1))\r");
    await driver.waitForText("two2");
    expect(driver.closeCode).toBe(null);
  }, 90_000);

  it("the stream channel refuses a peer without the secret and drops malformed messages with their descriptors; the host serves on", async () => {
    const dir = dataDir();
    const first = await serve(dir);
    const s = await create(first.url, { command: SHELL });
    const paths = hostPaths(dir);
    // No secret: the first message ends the channel.
    const stranger = FdChannel.connect(paths.streams);
    const strangerClosed = new Promise<void>((r) => stranger.events.on("closed", () => r()));
    stranger.send(new TextEncoder().encode(JSON.stringify({ type: "server", secret: "guess" })));
    await strangerClosed;
    // With the secret: garbage, a stream message without a descriptor, one with two; each dropped, descriptors closed.
    const channel = FdChannel.connect(paths.streams);
    channel.send(new TextEncoder().encode(JSON.stringify({ type: "server", secret: readSecret(paths) })));
    const pipe = await socketPair();
    channel.send(Uint8Array.of(0xff, 0x00, 0x7b));
    channel.send(new TextEncoder().encode(JSON.stringify({ type: "stream", conn: "x" })), [pipe.fd]);
    channel.send(new TextEncoder().encode("not json"), [pipe.fd, pipe.fd]);
    // The host closed its copies: the other end sees the end of the stream once ours is closed too.
    pipe.closeOurs();
    await pipe.ended;
    channel.close();
    const c = await connect(first.url, s.id);
    c.type("echo fine$((3*3))\r");
    await c.waitForText("fine9");
    expect(await serverConnections(first.url)).toBe(0);
  }, 60_000);

  it("WEBMUX_HOST_STREAMS=relay keeps the stream in the server (the path Bun and TLS take)", async () => {
    const dir = dataDir();
    const first = await serve(dir, { WEBMUX_HOST_STREAMS: "relay" });
    const s = await create(first.url, { command: SHELL });
    const c = await connect(first.url, s.id);
    c.type("echo relay$((2*3))\r");
    await c.waitForText("relay6");
    expect(await serverConnections(first.url)).toBe(1);
    const closed = c.closed();
    first.run.proc.kill("SIGKILL");
    expect(await closed).not.toBe(4404);
  }, 60_000);
});
