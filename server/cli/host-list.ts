/**
 * `webmux ls` without a server: ask the data dir's session host directly (docs/design.md, What
 * survives a restart). A one-shot COMMAND peer — it never keeps the host alive — that speaks only
 * the host protocol's pure codec (server/host/protocol.ts), so the CLI's remote commands load none
 * of the host's code.
 */
import { openSync, readFileSync, statSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { decodeHostFrame, encodeHostFrame, HOST_PROTOCOL, HostFrameReader, MAX_HOST_FRAME_BYTES, PeerRole, type HostMessage } from "../host/protocol.ts";

/** The host answers the hello and `list` in milliseconds; one that takes longer is hung. */
const HOST_ANSWER_TIMEOUT_MS = 5_000;
/** Linux's sun_path holds 108 bytes with the terminating NUL. */
const MAX_SOCKET_PATH_BYTES = 107;
/** The socket and secret inside the data dir, as the host makes them (server/host/host-dir.ts). */
const SOCKET_FILE = join("host", "host.sock");
const SECRET_FILE = join("host", "host.secret");

/** One session as the host lists it (the fields `ls` shows). */
export type HostListedSession = {
  id: string;
  command: string[];
  createdAt: number;
  title: string | null;
  hybrid: boolean;
  cols: number;
  rows: number;
  run: { generation: string; pid: number; status: "running" | "exited"; exitCode: number | null } | null;
};

/** No host answers for the data dir (none runs, or its secret is not ours to read). */
export class NoHostError extends Error {}

function readSecret(dataDir: string): string | null {
  const path = join(dataDir, SECRET_FILE);
  try {
    const st = statSync(path);
    // A secret others can read is not the host's (it writes it 0600).
    if ((st.mode & 0o077) !== 0 || (process.getuid && st.uid !== process.getuid())) return null;
    return readFileSync(path, "utf8").trim() || null;
  } catch {
    return null;
  }
}

/** The socket's path, or the same file through its directory's descriptor when too long for a Unix socket. */
function socketAddress(dataDir: string): string {
  const path = join(dataDir, SOCKET_FILE);
  if (Buffer.byteLength(path) <= MAX_SOCKET_PATH_BYTES) return path;
  return `/proc/self/fd/${openSync(join(dataDir, "host"), "r")}/host.sock`;
}

/** The sessions the data dir's host holds. */
export function listHostSessions(dataDir: string): Promise<HostListedSession[]> {
  const secret = readSecret(dataDir);
  if (secret === null) return Promise.reject(new NoHostError(`no session host runs for ${dataDir}`));
  return new Promise((resolve, reject) => {
    const socket = connect(socketAddress(dataDir));
    const reader = new HostFrameReader();
    const send = (message: HostMessage) => socket.write(encodeHostFrame(message));
    let settled = false;
    const finish = (err: Error | null, sessions?: HostListedSession[]) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (err) reject(err);
      else resolve(sessions!);
    };
    const timer = setTimeout(() => finish(new NoHostError(`the session host of ${dataDir} did not answer`)), HOST_ANSWER_TIMEOUT_MS);
    socket.on("error", () => finish(new NoHostError(`no session host runs for ${dataDir}`)));
    socket.on("close", () => finish(new NoHostError(`the session host of ${dataDir} closed the connection`)));
    socket.on("connect", () => send({ type: "hello", protocol: HOST_PROTOCOL, build: "webmux ls", secret, role: PeerRole.COMMAND, pid: process.pid }));
    socket.on("data", (chunk: Buffer) => {
      for (const frame of reader.push(chunk)) {
        const message = decodeHostFrame(frame);
        if (message.type === "welcome") {
          reader.setLimit(MAX_HOST_FRAME_BYTES);
          send({ type: "request", id: 1, method: "list", params: null, data: new Uint8Array(0) });
        } else if (message.type === "refused") {
          finish(new NoHostError(`the session host of ${dataDir} (${message.build}) refused: ${message.message}`));
        } else if (message.type === "reply" && message.id === 1) {
          const sessions = (message.result as { sessions?: unknown } | null)?.sessions;
          if (message.ok && Array.isArray(sessions)) finish(null, sessions as HostListedSession[]);
          else finish(new NoHostError(`the session host of ${dataDir} did not list its sessions`));
        }
      }
      if (reader.overLimit) finish(new NoHostError(`the session host of ${dataDir} sent a frame too large`));
    });
  });
}
