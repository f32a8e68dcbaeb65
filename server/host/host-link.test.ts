/**
 * The server's side of the session host against a real host (in this process) and a real PTY:
 * adopting a run in the middle of a flood loses and doubles nothing.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { spawnPty } from "../pty/index.ts";
import { waitFor } from "../testing/wait.ts";
import { HostLink } from "./host-link.ts";
import { HostedSessions, type AdoptedSession } from "./hosted-sessions.ts";
import { PeerRole } from "./protocol.ts";
import { SessionHost, type HostPeer } from "./session-host.ts";

const dirs: string[] = [];
const hosts: SessionHost[] = [];

afterEach(async () => {
  for (const host of hosts.splice(0)) await host.stop("test over");
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const peer = (role: PeerRole) => ({ send: () => {}, emit: () => {}, role, pid: process.pid, build: "test", socket: null as never }) as HostPeer;

it("adopts a run in the middle of a flood: the reply's bytes and the output behind them are the whole output, once", async () => {
  const dir = mkdtempSync(join(tmpdir(), "webmux-link-"));
  dirs.push(dir);
  const service = new HostedSessions(spawnPty);
  const host = new SessionHost({ dataDir: dir, build: "test", service });
  hosts.push(host);
  await host.start();
  const n = 1_500_000;
  service.handle(
    peer(PeerRole.SERVER),
    "spawn",
    {
      ref: 7,
      generation: "g.1",
      bufferBytes: 64 * 1024 * 1024,
      spawn: { command: ["sh", "-c", `seq 1 ${n}; echo END; exec sleep 1000`], cwd: "/", env: { PATH: process.env.PATH! }, cols: 80, rows: 24 },
      meta: { id: "flood001", command: ["sh"], cwd: "/", env: {}, createdAt: Date.now(), title: null, hybrid: false },
    },
    new Uint8Array(0),
  );
  const end = async () => (((await service.handle(peer(PeerRole.COMMAND), "list", null, new Uint8Array(0))).result as { sessions: AdoptedSession[] }).sessions[0]!.run!.end);
  await waitFor(async () => (await end()) > 500_000, { message: "the flood under way" });

  const { link, adopted } = await HostLink.open({ dataDir: dir, bufferBytes: 64 * 1024 * 1024 });
  try {
    const run = adopted[0]!;
    expect(run.run!.start).toBe(0);
    const chunks: Uint8Array[] = [Buffer.from(run.bytes)];
    run.pty!.onData((chunk) => chunks.push(Buffer.from(chunk)));
    await waitFor(() => Buffer.concat(chunks).includes("END\r\n"), { timeout: 60_000, message: "the end of the flood" });
    const text = Buffer.concat(chunks).toString("latin1");
    expect(text.length).toBe(await end());
    const lines = text.split("\r\n").filter((l) => /^\d+$/.test(l));
    for (let i = 0; i < lines.length; i++) if (Number(lines[i]) !== i + 1) throw new Error(`line ${i + 1} is ${lines[i]}`);
    expect(lines.length).toBe(n);
  } finally {
    link.close();
  }
}, 90_000);
