/**
 * Replacing a session host without ending its sessions (docs/design.md, What survives a restart).
 *
 * The old host starts its successor (the new build's `webmux host --successor`, as the new server
 * asked) with every running PTY's master descriptor inherited from fd 4 on and a pipe on fd 3,
 * writes the handover document on the pipe (./handover.ts), and waits until the successor listens
 * with the sessions. Then it closes its copies of the terminals and stays on only as the programs'
 * reaper: they are its children, so it waits for them and sends each exit status over the pipe,
 * and exits when the last one ended. Signals reach the programs from the successor directly.
 * If the successor goes away first, the reaper ends the programs (as the death of a host does).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import { Socket } from "node:net";
import { adoptPty, type AdoptedPty } from "../pty/adopted-pty.ts";
import { terminate } from "../pty/terminate.ts";
import { encodeHandoverMessage, HANDOVER_CHANNEL_FD, HandoverReader, type HandoverDocument, type HandoverMessage } from "./handover.ts";
import type { HostPaths } from "./host-dir.ts";
import { HandoverError, type HostedSessions } from "./hosted-sessions.ts";
import type { SuccessorCommand } from "./protocol.ts";
import { HOST_START_TIMEOUT_MS } from "./spawn-host.ts";

export type HandoverResult = {
  /** the successor's pid */
  pid: number;
  sessions: number;
  /** settles when the last handed-over program ended and its exit was sent */
  reaped: Promise<void>;
};

export type HandoverFrom = HandoverDocument["from"];

function send(channel: Socket, message: HandoverMessage, bytes?: Uint8Array): void {
  for (const part of encodeHandoverMessage(message, bytes)) channel.write(part);
}

/** The old host's side: throws HandoverError when the successor did not take the sessions (they stay here, read again). */
export async function handOver(successor: SuccessorCommand, service: HostedSessions, from: HandoverFrom, paths: HostPaths, log: (line: string) => void): Promise<HandoverResult> {
  const prepared = await service.prepareHandover();
  let child: ChildProcess;
  const logFd = openSync(paths.log, "a", 0o600);
  try {
    const [file, ...args] = successor.argv as [string, ...string[]];
    child = spawn(file, args, { cwd: successor.cwd, env: successor.env, detached: true, stdio: ["ignore", logFd, logFd, "pipe", ...prepared.fds] });
  } catch (err) {
    prepared.abort();
    throw new HandoverError(`cannot start ${successor.argv[0]}: ${(err as Error).message}`);
  } finally {
    closeSync(logFd);
  }
  const channel = child.stdio[HANDOVER_CHANNEL_FD] as Socket;
  const reader = new HandoverReader();
  const incoming: ((m: HandoverMessage) => void)[] = [];
  channel.on("data", (chunk: Buffer) => {
    for (const decoded of reader.push(chunk)) {
      if ("invalid" in decoded) log(`handover: the successor sent something unreadable (${decoded.invalid})`);
      else for (const listener of incoming) listener(decoded.message);
    }
  });
  channel.on("error", () => {});
  send(channel, { ...prepared.document, from }, prepared.bytes);

  const answer = await new Promise<{ ok: true; pid: number } | { ok: false; reason: string }>((resolve) => {
    const timer = setTimeout(() => resolve({ ok: false, reason: `the successor did not take the sessions within ${HOST_START_TIMEOUT_MS / 1000} s (see ${paths.log})` }), HOST_START_TIMEOUT_MS);
    const done = (a: { ok: true; pid: number } | { ok: false; reason: string }) => {
      clearTimeout(timer);
      resolve(a);
    };
    incoming.push((m) => {
      if (m.type === "adopted") done({ ok: true, pid: m.pid });
      else if (m.type === "failed") done({ ok: false, reason: `the successor could not take them: ${m.message}` });
    });
    child.once("error", (err) => done({ ok: false, reason: `cannot start ${successor.argv[0]}: ${err.message}` }));
    child.once("exit", (code, signal) => done({ ok: false, reason: `the successor exited (${signal ?? code}) before it took them (see ${paths.log})` }));
  });
  if (!answer.ok) {
    child.kill("SIGKILL");
    channel.destroy();
    prepared.abort();
    throw new HandoverError(answer.reason);
  }
  prepared.release();
  child.unref();
  log(`handed ${prepared.document.sessions.length} session(s) over to the successor (pid ${answer.pid}); waiting for ${prepared.programs.length} program(s) as their reaper`);

  // The reaper: each handed-over program is still this process's child.
  let successorGone = false;
  channel.once("close", () => {
    successorGone = true;
    const left = prepared.programs.filter((p) => p.pid && !ended.has(p));
    if (left.length === 0) return;
    log(`the successor went away with ${left.length} program(s) running: ending them`);
    for (const p of left) void terminate(p);
  });
  const ended = new Set<unknown>();
  const reaped = Promise.all(
    prepared.programs.map(async (p) => {
      const exit = await p.exited;
      ended.add(p);
      if (!successorGone) send(channel, { type: "exit", pid: p.pid, exitCode: exit.exitCode, signal: exit.signal });
    }),
  ).then(
    () =>
      new Promise<void>((resolve) => {
        if (successorGone) return resolve();
        channel.end(() => resolve());
      }),
  );
  return { pid: answer.pid, sessions: prepared.document.sessions.length, reaped };
}

/** How often the successor looks whether a program whose reaper was killed has ended. */
const ORPHAN_POLL_MS = 1_000;

/** Gone, or a zombie nobody has waited for yet. */
function programEnded(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return /^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return true;
  }
}

/**
 * The reaper was killed (SIGKILL) before the programs it waited for: their exit statuses are lost,
 * so each is reported as a hang-up once it is gone, as when a host dies under a server.
 */
function watchOrphans(service: HostedSessions): void {
  const timer = setInterval(() => {
    for (const pid of service.adoptedPids()) if (programEnded(pid)) service.reaped(pid, { exitCode: 129, signal: 1 });
    if (service.adoptedRunning === 0) clearInterval(timer);
  }, ORPHAN_POLL_MS);
}

/** What the successor has once it took the sessions: the pipe to its predecessor, for the exits. */
export type TakenOver = { from: HandoverFrom; sessions: number; channel: Socket; begin(): void; confirm(): void; fail(message: string): void };

/**
 * The successor's side: read the document from the inherited pipe and put the sessions into the
 * service (nothing is read from their terminals before `begin`). When the document cannot be
 * used it tells the predecessor (which then goes on with the sessions) and throws.
 */
export async function takeOver(service: HostedSessions, log: (line: string) => void): Promise<TakenOver> {
  const channel = new Socket({ fd: HANDOVER_CHANNEL_FD, readable: true, writable: true });
  const reader = new HandoverReader();
  const fail = (message: string) => {
    send(channel, { type: "failed", message });
    channel.end();
  };
  const first = await new Promise<{ document: HandoverDocument; bytes: Uint8Array }>((resolve, reject) => {
    const failWith = (message: string) => {
      fail(message);
      reject(new Error(message));
    };
    let got = false;
    channel.on("data", (chunk: Buffer) => {
      for (const decoded of reader.push(chunk)) {
        if (!got) {
          got = true;
          if ("invalid" in decoded) failWith(`the handover document is unreadable: ${decoded.invalid}`);
          else if (decoded.message.type !== "handover") failWith(`the handover began with ${decoded.message.type}`);
          else resolve({ document: decoded.message, bytes: decoded.bytes });
          continue;
        }
        if ("invalid" in decoded) {
          log(`handover: the predecessor sent something unreadable (${decoded.invalid})`);
          continue;
        }
        const m = decoded.message;
        if (m.type === "exit") service.reaped(m.pid, { exitCode: m.exitCode, signal: m.signal });
      }
    });
    channel.on("error", () => {});
    channel.once("close", () => {
      if (!got) reject(new Error("the predecessor closed the pipe before the document"));
      else if (service.adoptedRunning > 0) {
        log(`the predecessor went away before ${service.adoptedRunning} handed-over program(s) ended: their end is watched for, without its status`);
        watchOrphans(service);
      }
    });
  });
  const adopted: AdoptedPty[] = [];
  try {
    if (process.versions.bun) throw new Error("the successor runs on Bun, which cannot read a terminal it did not open");
    service.adoptHandover(first.document, first.bytes, (fd, pid, ptsName) => {
      const pty = adoptPty({ fd, pid, ptsName });
      adopted.push(pty);
      return pty;
    });
  } catch (err) {
    fail((err as Error).message);
    throw err;
  }
  return {
    from: first.document.from,
    sessions: first.document.sessions.length,
    channel,
    begin: () => {
      for (const pty of adopted) pty.begin();
    },
    confirm: () => send(channel, { type: "adopted", pid: process.pid }),
    fail,
  };
}
