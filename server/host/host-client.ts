/**
 * The peer side of a host connection: connect to the data dir's socket, say hello with the
 * secret, then requests (each answered once, in any order), events and the hot-path frames.
 */
import { connect, type Socket } from "node:net";
import { Emitter } from "../session/emitter.ts";
import { readSecret, socketAddress, type HostPaths } from "./host-dir.ts";
import { HostSocket } from "./host-socket.ts";
import { SPOKEN_HOST_PROTOCOL } from "./build.ts";
import { PeerRole, Refusal, type HostMessage, type OutputMark, type SuccessorCommand } from "./protocol.ts";

/** Connecting and the hello's answer take milliseconds; a host that takes longer is hung. */
export const HELLO_ANSWER_TIMEOUT_MS = 5_000;

type Welcome = Extract<HostMessage, { type: "welcome" }>;

/** Nothing listens on the socket (no host, or one that died and left its socket file). */
export class HostUnavailableError extends Error {}

/** The host answered the hello with a refusal. */
export class HostRefusedError extends Error {
  constructor(
    readonly reason: Refusal,
    /** the protocol and build of the host */
    readonly protocol: number,
    readonly build: string,
    message: string,
  ) {
    super(message);
  }
}

/** The connection ended before the answer came. */
export class HostGoneError extends Error {}

/** The host answered a request with an error. */
export class HostCallError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export type HostConnectionEvents = {
  event: [name: string, body: unknown, data: Uint8Array];
  /** `data` is lent: valid only while the listeners run (HostSocketOptions.lendOutput) */
  output: [ref: number, marks: OutputMark[], data: Uint8Array];
  /** the connection ended (the host exited or was killed, or close() was called) */
  closed: [];
};

export type ConnectOptions = {
  role: PeerRole;
  build: string;
  /** speak this protocol in the hello instead of ours (tests of a version mismatch) */
  protocol?: number;
  timeoutMs?: number;
};

export type HostAnswer = { result: unknown; data: Uint8Array };

export class HostConnection {
  readonly events = new Emitter<HostConnectionEvents>();
  private readonly pending = new Map<number, { resolve: (a: HostAnswer) => void; reject: (e: Error) => void }>();
  private nextId = 1;

  private constructor(
    private readonly conn: HostSocket,
    readonly welcome: Welcome,
  ) {
    conn.events.on("message", (message) => this.receive(message));
    conn.events.on("closed", () => {
      for (const p of this.pending.values()) p.reject(new HostGoneError("the session host went away"));
      this.pending.clear();
      this.events.emit("closed");
    });
  }

  /** Connect and say hello; throws HostUnavailableError, HostRefusedError or HostGoneError. */
  static async connect(paths: HostPaths, options: ConnectOptions): Promise<HostConnection> {
    const socket = await openHostSocket(paths);
    // Read once connected: a host that won a start race writes its secret before it listens, so
    // the secret read now is the one of the host this socket reached.
    const secret = readSecret(paths);
    // OUTPUT is lent: the one listener, the server's mirror, copies it into its ring.
    const conn = new HostSocket(socket, undefined, { lendOutput: true });
    conn.trust();
    const welcome = await new Promise<Welcome>((resolve, reject) => {
      const timer = setTimeout(() => {
        conn.destroy();
        reject(new HostGoneError("the session host did not answer"));
      }, options.timeoutMs ?? HELLO_ANSWER_TIMEOUT_MS);
      const offMessage = conn.events.on("message", (message) => {
        cleanup();
        if (message.type === "welcome") resolve(message);
        else if (message.type === "refused") {
          conn.destroy();
          reject(new HostRefusedError(message.reason, message.protocol, message.build, message.message));
        } else {
          conn.destroy();
          reject(new HostGoneError(`the session host answered the hello with ${message.type}`));
        }
      });
      const offClosed = conn.events.on("closed", () => {
        cleanup();
        reject(new HostGoneError("the session host closed the connection"));
      });
      const cleanup = () => {
        clearTimeout(timer);
        offMessage();
        offClosed();
      };
      conn.send({ type: "hello", protocol: options.protocol ?? SPOKEN_HOST_PROTOCOL, build: options.build, secret: secret ?? "", role: options.role, pid: process.pid });
    });
    return new HostConnection(conn, welcome);
  }

  get isOpen(): boolean {
    return this.conn.isOpen;
  }

  /** Bytes written to the host that it has not read yet. */
  get queuedBytes(): number {
    return this.conn.queuedBytes;
  }

  request(method: string, params: unknown = null, data: Uint8Array = new Uint8Array(0)): Promise<HostAnswer> {
    if (!this.conn.isOpen) return Promise.reject(new HostGoneError("the session host went away"));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.conn.send({ type: "request", id, method, params, data });
    });
  }

  /** Bytes for a session's program (hot path: no answer). */
  input(ref: number, flags: number, data: Uint8Array): void {
    this.conn.send({ type: "input", ref, flags, data });
  }

  close(): void {
    this.conn.end();
  }

  destroy(): void {
    this.conn.destroy();
  }

  private receive(message: HostMessage): void {
    switch (message.type) {
      case "reply": {
        const waiting = this.pending.get(message.id);
        if (!waiting) return;
        this.pending.delete(message.id);
        if (message.ok) waiting.resolve({ result: message.result, data: message.data });
        else {
          const error = (message.result ?? {}) as { code?: unknown; message?: unknown };
          waiting.reject(new HostCallError(String(error.code ?? "INTERNAL"), String(error.message ?? "the session host failed")));
        }
        return;
      }
      case "event":
        this.events.emit("event", message.name, message.body, message.data);
        return;
      case "output":
        this.events.emit("output", message.ref, message.marks, message.data);
        return;
      default:
        return;
    }
  }
}

/** A connected socket to the data dir's host; HostUnavailableError when none listens. */
function openHostSocket(paths: HostPaths): Promise<Socket> {
  return new Promise<Socket>((resolve, reject) => {
    let address: string;
    try {
      address = socketAddress(paths.socket);
    } catch (err) {
      reject(err);
      return;
    }
    const s = connect(address);
    s.once("connect", () => {
      s.off("error", onError);
      resolve(s);
    });
    const onError = (err: NodeJS.ErrnoException) => {
      s.destroy();
      if (err.code === "ENOENT" || err.code === "ECONNREFUSED") reject(new HostUnavailableError(`no session host listens on ${paths.socket}`));
      else reject(err);
    };
    s.once("error", onError);
  });
}

/** The host handed its sessions over: the successor's pid and how many sessions it took. */
export type HandedOver = { pid: number; sessions: number };

/**
 * Ask the data dir's host, of whatever protocol version, to hand its sessions over to a successor
 * started with `successor` (docs/design.md, What survives a restart). Throws HostRefusedError with
 * its reason when it cannot, and HostGoneError when it closed without answering (a build from
 * before handovers, which does not know the request).
 */
export async function requestHandover(paths: HostPaths, successor: SuccessorCommand, options: { build: string; timeoutMs: number }): Promise<HandedOver> {
  const secret = readSecret(paths);
  const conn = new HostSocket(await openHostSocket(paths));
  return await new Promise<HandedOver>((resolve, reject) => {
    const timer = setTimeout(() => {
      conn.destroy();
      reject(new HostGoneError(`the session host did not answer the handover request within ${options.timeoutMs / 1000} s`));
    }, options.timeoutMs);
    const offClosed = conn.events.on("closed", () => {
      clearTimeout(timer);
      reject(new HostGoneError("it closed the connection at the handover request, as a build from before handovers does"));
    });
    conn.events.on("message", (message) => {
      clearTimeout(timer);
      offClosed();
      conn.destroy();
      if (message.type === "handed-over") resolve({ pid: message.pid, sessions: message.sessions });
      else if (message.type === "refused") reject(new HostRefusedError(message.reason, message.protocol, message.build, message.message));
      else reject(new HostGoneError(`the session host answered the handover request with ${message.type}`));
    });
    conn.send({ type: "handover", protocol: SPOKEN_HOST_PROTOCOL, build: options.build, secret: secret ?? "", pid: process.pid, successor });
  });
}

/**
 * Whether a host holds the socket: its pid (0 when it refused to say, or took the connection and
 * did not answer in time), or null when nothing listens there. A host that is slow to answer — a
 * loaded machine, a stopped process — still holds its sessions: taking its socket path would leave
 * them with a host nobody can reach, so only a refused or missing socket counts as no host.
 */
export async function probeHost(paths: HostPaths): Promise<{ pid: number } | null> {
  try {
    const conn = await HostConnection.connect(paths, { role: PeerRole.COMMAND, build: "probe" });
    const pid = conn.welcome.pid;
    conn.close();
    return { pid };
  } catch (err) {
    if (err instanceof HostUnavailableError) return null;
    return { pid: 0 };
  }
}
