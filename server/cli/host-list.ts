/**
 * `webmux ls` without a server: ask the data dir's session host directly (docs/design.md, What
 * survives a restart). A one-shot COMMAND peer — it never keeps the host alive — that speaks only
 * the host protocol's pure codec (server/host/protocol.ts) and finds the host through its data-dir
 * layout (server/host/host-dir.ts), so the CLI's remote commands load none of the host's running code.
 */
import { connect } from "node:net";
import { hostPaths, readSecret, socketAddress } from "../host/host-dir.ts";
import { decodeHostFrame, encodeHostFrame, HOST_PROTOCOL, HostFrameReader, MAX_HOST_FRAME_BYTES, PeerRole, type HostMessage } from "../host/protocol.ts";

/** The host answers the hello and `list` in milliseconds; one that takes longer is hung. */
const HOST_ANSWER_TIMEOUT_MS = 5_000;

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

/** The sessions the data dir's host holds. */
export function listHostSessions(dataDir: string): Promise<HostListedSession[]> {
  const paths = hostPaths(dataDir);
  const secret = readSecret(paths);
  if (secret === null) return Promise.reject(new NoHostError(`no session host runs for ${dataDir}`));
  return new Promise((resolve, reject) => {
    const socket = connect(socketAddress(paths.socket));
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
