/**
 * The descriptor channel between two real processes over a real Unix socket (docs/design.md, The
 * session host serves the streams): a descriptor arrives and works, a TCP connection handed over
 * mid-stream carries on end to end, and garbage never crashes the receiver or leaks a descriptor.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, closeSync, fstatSync, mkdtempSync, openSync, readdirSync, readSync, rmSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FdChannel, FdListener, fdPassingSupported, socketFromFd, type FdHandoff } from "./fd-channel.ts";
import { waitFor } from "../testing/wait.ts";

const DEADLINE = { timeout: 30_000 };
const addonPath = new URL("../native/fd-pass/index.cjs", import.meta.url).pathname;

function openFds(): number {
  return readdirSync("/proc/self/fd").length;
}

/** A Node child that runs `body` with `fp` (the addon) and `path` (the channel's socket) in scope. */
function child(body: string, path: string, options: { uid?: number } = {}): ChildProcess & { output: () => string } {
  const script = `const fp = require(${JSON.stringify(addonPath)}); const path = ${JSON.stringify(path)}; const net = require("node:net"); const fs = require("node:fs");\n${body}`;
  const proc = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "pipe"], uid: options.uid, gid: options.uid });
  let out = "";
  proc.stdout!.on("data", (d: Buffer) => (out += d));
  proc.stderr!.on("data", (d: Buffer) => (out += d));
  return Object.assign(proc, { output: () => out });
}

function exited(proc: ChildProcess): Promise<number | null> {
  if (proc.exitCode !== null) return Promise.resolve(proc.exitCode);
  return new Promise((resolve) => proc.once("exit", (code) => resolve(code)));
}

/** A Python child for what the addon refuses to send (too many descriptors, oversized messages). */
function python(body: string, path: string): ChildProcess & { output: () => string } {
  const script = `import socket, os, array\npath = ${JSON.stringify(path)}\ns = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)\ns.connect(path)\n${body}`;
  const proc = spawn("python3", ["-c", script], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  proc.stdout!.on("data", (d: Buffer) => (out += d));
  proc.stderr!.on("data", (d: Buffer) => (out += d));
  return Object.assign(proc, { output: () => out });
}

describe.skipIf(!fdPassingSupported())("descriptor channel", () => {
  let dir: string;
  let listener: FdListener;
  const cleanups: (() => void)[] = [];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "webmux-fd-"));
    chmodSync(dir, 0o700);
    listener = new FdListener(join(dir, "fd.sock"));
  });
  afterEach(() => {
    for (const c of cleanups.splice(0)) c();
    listener.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function nextChannel(): Promise<FdChannel> {
    return new Promise((resolve) => listener.events.once("channel", (ch) => {
      cleanups.push(() => ch.close());
      resolve(ch);
    }));
  }

  it("a descriptor sent by another process reads a file only that descriptor still reaches", async () => {
    const channel = nextChannel();
    const proc = child(
      `const c = fp.connect(path);
       const file = path + ".data";
       fs.writeFileSync(file, "written by the child " + process.pid);
       const fd = fs.openSync(file, "r");
       fp.sendFds(c, [fd], Buffer.from("file"));
       fs.closeSync(fd); fs.unlinkSync(file);
       console.log("sent");`,
      listener.path,
    );
    const ch = await channel;
    const got = await new Promise<{ data: string; text: string }>((resolve) => {
      ch.events.once("message", (data, fds) => {
        const fd = fds.take(0);
        const buf = Buffer.alloc(200);
        const n = readSync(fd, buf, 0, 200, 0);
        closeSync(fd);
        resolve({ data: String(data), text: buf.subarray(0, n).toString() });
      });
    });
    expect(got.data).toBe("file");
    expect(got.text).toBe(`written by the child ${proc.pid}`);
    expect(await exited(proc)).toBe(0);
    // the file was unlinked before we read: only the passed descriptor could have reached it
  });

  it("a TCP connection handed over mid-stream keeps working end to end", async () => {
    // The far end: a TCP server in this process that talks to whoever holds the connection.
    const lines: string[] = [];
    let far: Socket | null = null;
    const server: Server = createServer((socket) => {
      far = socket;
      socket.setEncoding("utf8");
      socket.on("data", (d: string) => lines.push(...d.split("\n").filter(Boolean)));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    cleanups.push(() => server.close());
    const port = (server.address() as { port: number }).port;
    const channel = nextChannel();
    // The child connects, says its line, and hands the live connection over with its parameters.
    const proc = child(
      `const c = fp.connect(path);
       const s = net.connect(${port}, "127.0.0.1", () => {
         s.write("before the handover\\n", () => {
           fp.sendFds(c, [s._handle.fd], Buffer.from(JSON.stringify({ session: "abc", resumeFrom: 42 })));
           s.destroy(); fp.closeFd(c);
         });
       });`,
      listener.path,
    );
    const ch = await channel;
    const handed = await new Promise<{ params: unknown; socket: Socket }>((resolve) => {
      ch.events.once("message", (data, fds: FdHandoff) => resolve({ params: JSON.parse(String(data)), socket: socketFromFd(fds.take(0)) }));
    });
    cleanups.push(() => handed.socket.destroy());
    expect(handed.params).toEqual({ session: "abc", resumeFrom: 42 });
    expect(await exited(proc)).toBe(0);
    await waitFor(() => lines.includes("before the handover"), DEADLINE);
    // Both directions after the sender's process is gone.
    let heard = "";
    handed.socket.setEncoding("utf8");
    handed.socket.on("data", (d: string) => (heard += d));
    far!.write("from the far end\n");
    handed.socket.write("after the handover\n");
    await waitFor(() => heard === "from the far end\n" && lines.includes("after the handover"), DEADLINE);
    // The end of the stream reaches the far end too.
    const farClosed = new Promise<void>((r) => far!.once("end", () => r()));
    handed.socket.end();
    await farClosed;
  });

  it("garbage on the channel never crashes the receiver and leaks no descriptor", async () => {
    const baseline = openFds();
    const channel = nextChannel();
    let dropped = 0;
    const received: string[] = [];
    const proc = python(
      `r, w = os.pipe()
# too many descriptors for one message (more than the receiver takes): the message is dropped whole
socket.send_fds(s, [b"many"], [r] * 40)
# more bytes than a message may carry: dropped
socket.send_fds(s, [b"x" * (100 * 1024)], [r])
# garbage bytes with no descriptor, and one with a descriptor that are both delivered as messages
s.send(b"\\xff\\x00garbage")
socket.send_fds(s, [b"one"], [w])
s.send(b"last")
print("sent", flush=True)
s.close()`,
      listener.path,
    );
    const ch = await channel;
    ch.events.on("dropped", () => dropped++);
    ch.events.on("message", (data, fds) => {
      received.push(`${data.toString("latin1")}:${fds.count}`);
      if (String(data) === "one") throw new Error("a handler that throws must not break the channel");
    });
    const closed = new Promise<void>((r) => ch.events.once("closed", () => r()));
    await closed;
    expect(await exited(proc), proc.output()).toBe(0);
    expect(proc.output()).toContain("sent");
    expect(dropped).toBe(2);
    expect(received).toEqual(["\xff\x00garbage:0", "one:1", "last:0"]);
    // every descriptor that arrived was closed: the channel's own and all received ones
    await waitFor(() => openFds() <= baseline, DEADLINE);
  });

  it("an untaken descriptor is closed after the handler, and a closed peer ends the channel", async () => {
    const baseline = openFds();
    const channel = nextChannel();
    const proc = child(
      `const c = fp.connect(path);
       const fd = fs.openSync("/dev/null", "r");
       for (let i = 0; i < 5; i++) fp.sendFds(c, [fd, fd, fd], Buffer.from("ignored " + i));
       fp.closeFd(c);`,
      listener.path,
    );
    const ch = await channel;
    let messages = 0;
    ch.events.on("message", () => messages++);
    await new Promise<void>((r) => ch.events.once("closed", () => r()));
    expect(await exited(proc)).toBe(0);
    expect(messages).toBe(5);
    await waitFor(() => openFds() <= baseline, DEADLINE);
  });

  it("sending to a closed channel throws and leaves the caller's descriptors open", async () => {
    const channel = nextChannel();
    const sender = FdChannel.connect(listener.path);
    const receiver = await channel;
    receiver.close();
    const fd = openSync("/dev/null", "r");
    try {
      expect(() => sender.send(Buffer.from("x"), [fd])).toThrow(/Broken pipe|reset/);
      expect(fstatSync(fd).isCharacterDevice()).toBe(true);
    } finally {
      closeSync(fd);
      sender.close();
    }
    expect(() => sender.send(Buffer.from("x"))).toThrow(/closed/);
  });

  it.skipIf(process.getuid?.() !== 0)("a peer of another uid is refused before it is read", async () => {
    // Only root can play another user; the socket is widened so that user can reach it at all.
    chmodSync(dir, 0o755);
    chmodSync(listener.path, 0o777);
    const refused = new Promise<number>((r) => listener.events.once("refused", (uid) => r(uid)));
    let channels = 0;
    listener.events.on("channel", () => channels++);
    const proc = child(
      `const c = fp.connect(path);
       const fd = fs.openSync("/dev/null", "r");
       try { fp.sendFds(c, [fd], Buffer.from("from nobody")); } catch {}
       console.log("connected");`,
      listener.path,
      { uid: 65534 },
    );
    expect(await refused).toBe(65534);
    expect(await exited(proc)).toBe(0);
    expect(channels).toBe(0);
  });
});
