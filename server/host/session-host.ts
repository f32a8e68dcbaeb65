/**
 * The session host process (docs/design.md, What survives a restart): it listens on the Unix
 * socket of its data dir, lets in peers that present the secret and speak its protocol, hands
 * their requests to its service (the sessions), and exits by itself once nothing would be lost:
 * no server connected and no session left worth keeping.
 */
import { randomBytes } from "node:crypto";
import { chmodSync, unlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { secretsEqual } from "../http/credentials.ts";
import { HostDirError, prepareHostDir, releaseStartLock, socketAddress, takeStartLock, writeSecret, type HostPaths } from "./host-dir.ts";
import { HostSocket } from "./host-socket.ts";
import { probeHost } from "./host-client.ts";
import { PLAYS_HOST_BEFORE_HANDOVERS, SPOKEN_HOST_PROTOCOL } from "./build.ts";
import { PeerRole, Refusal, type HostMessage, type SuccessorCommand } from "./protocol.ts";

/** A peer that has not said hello within this long is dropped. */
export const HELLO_TIMEOUT_MS = 5_000;
/** A host nobody connects to after it started (its spawner died) exits after this long, if it holds nothing. */
export const FIRST_SERVER_WAIT_MS = 30_000;
/** How long start-up waits for a host that holds the start lock to finish starting. */
const LOCK_WAIT_MS = 10_000;
const LOCK_POLL_MS = 25;

/** One connected peer, after its hello. */
export type HostPeer = {
  readonly role: PeerRole;
  readonly pid: number;
  readonly build: string;
  readonly socket: HostSocket;
  send(message: HostMessage): void;
  /** an event to this peer */
  emit(name: string, body: unknown, data?: Uint8Array): void;
};

/** What a request answers: a JSON result and, optionally, bytes. */
export type HostReply = { result: unknown; data?: Uint8Array };

/** A request the service refuses: the peer gets `{code, message}`. */
export class HostRequestError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** What the host hosts; the host itself only knows peers and its own lifetime. */
export interface HostService {
  /** sessions, for the hello's answer */
  sessionCount(): number;
  /** whether exiting now would lose something (a running program, a conversation) */
  holdsWork(): boolean;
  handle(peer: HostPeer, method: string, params: unknown, data: Uint8Array): HostReply | Promise<HostReply>;
  /** bytes for a session's program (an INPUT frame: no answer) */
  input(peer: HostPeer, ref: number, flags: number, data: Uint8Array): void;
  /** a peer's hello was accepted / it went away */
  peerJoined(peer: HostPeer): void;
  peerLeft(peer: HostPeer): void;
  /** `webmux stop`: end every session; resolves with how many there were */
  endAll(): Promise<number>;
}

/** A service that hosts nothing (the host's own tests, before any session code is wired in). */
export class EmptyService implements HostService {
  sessionCount(): number {
    return 0;
  }
  holdsWork(): boolean {
    return false;
  }
  handle(_peer: HostPeer, method: string): HostReply {
    throw new HostRequestError("UNKNOWN_METHOD", `unknown method ${method}`);
  }
  input(): void {}
  peerJoined(): void {}
  peerLeft(): void {}
  async endAll(): Promise<number> {
    return 0;
  }
}

export type SessionHostOptions = {
  dataDir: string;
  /** this build, told to every peer (`webmux 0.1.0`) */
  build: string;
  service: HostService;
  log?: (line: string) => void;
  /** override FIRST_SERVER_WAIT_MS (tests) */
  firstServerWaitMs?: number;
  /** the protocol this host speaks (default HOST_PROTOCOL; a test plays a host of another build) */
  protocol?: number;
  /** called once the host has stopped listening and is about to end */
  onExit?: (reason: string) => void;
  /**
   * Hand every session over to a successor started with this command; resolves once it holds
   * them, with a promise that settles when this process has nothing left to wait for. Without
   * it, a handover request is refused.
   */
  handover?: (successor: SuccessorCommand) => Promise<{ pid: number; sessions: number; reaped: Promise<void> }>;
};

export type HostStart = { status: "listening" } | { status: "running"; pid: number };

export class SessionHost {
  /** Identifies this host run: generations it draws start with it. */
  readonly id = `${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
  private readonly peers = new Set<HostPeer>();
  private serverPeer: HostPeer | null = null;
  private listener: Server | null = null;
  private paths: HostPaths | null = null;
  private secret = "";
  private ending = false;
  private exited = false;
  private hadServer = false;
  private firstServerTimer: ReturnType<typeof setTimeout> | null = null;
  private readonly log: (line: string) => void;

  private get protocol(): number {
    return this.options.protocol ?? SPOKEN_HOST_PROTOCOL;
  }

  constructor(private readonly options: SessionHostOptions) {
    this.log = options.log ?? (() => {});
  }

  get service(): HostService {
    return this.options.service;
  }

  get hasServer(): boolean {
    return this.serverPeer !== null;
  }

  /**
   * Listen on the data dir's socket, unless another host already answers there. Two hosts
   * starting at once: the start lock lets exactly one of them listen; the other finds it.
   */
  async start(options: { successor?: boolean } = {}): Promise<HostStart> {
    const paths = prepareHostDir(this.options.dataDir);
    this.paths = paths;
    // A successor's predecessor took the start lock for it and stopped listening: the lock passes on.
    if (options.successor) writeFileSync(paths.lock, String(process.pid), { mode: 0o600 });
    const deadline = Date.now() + LOCK_WAIT_MS;
    while (!options.successor && !takeStartLock(paths)) {
      const running = await probeHost(paths);
      if (running) return { status: "running", pid: running.pid };
      if (Date.now() > deadline) throw new HostDirError(`${paths.lock} is held by a host that does not start`);
      await new Promise((r) => setTimeout(r, LOCK_POLL_MS));
    }
    try {
      const running = options.successor ? null : await probeHost(paths);
      if (running) return { status: "running", pid: running.pid };
      try {
        unlinkSync(paths.socket); // left by a host that died (or by the predecessor)
      } catch {
        // none
      }
      this.secret = writeSecret(paths);
      await this.listen(paths);
    } finally {
      releaseStartLock(paths);
    }
    this.log(`session host ${this.id} (pid ${process.pid}, ${this.options.build}) listening on ${paths.socket}`);
    this.firstServerTimer = setTimeout(() => {
      this.firstServerTimer = null;
      this.checkIdle("no server connected");
    }, this.options.firstServerWaitMs ?? FIRST_SERVER_WAIT_MS);
    this.firstServerTimer.unref?.();
    return { status: "listening" };
  }

  private listen(paths: HostPaths): Promise<void> {
    const listener = createServer((socket) => this.accept(socket));
    this.listener = listener;
    return new Promise<void>((resolve, reject) => {
      listener.once("error", reject);
      // The directory is 0700 already; the umask keeps the socket private from its first moment.
      const umask = process.umask(0o077);
      try {
        listener.listen(socketAddress(paths.socket), () => {
          listener.off("error", reject);
          chmodSync(paths.socket, 0o600);
          resolve();
        });
      } finally {
        process.umask(umask);
      }
    });
  }

  private accept(socket: Socket): void {
    const conn = new HostSocket(socket);
    const timer = setTimeout(() => conn.destroy(), HELLO_TIMEOUT_MS);
    timer.unref?.();
    let peer: HostPeer | null = null;
    conn.events.on("closed", () => {
      clearTimeout(timer);
      if (peer) this.leave(peer);
    });
    conn.events.on("message", (message) => {
      if (!peer) {
        clearTimeout(timer);
        // (a host playing a build from before handovers treats the request as a frame it does not know)
        if (message.type === "handover" && !PLAYS_HOST_BEFORE_HANDOVERS) void this.handOver(conn, message);
        else peer = this.greet(conn, message);
        return;
      }
      this.dispatch(peer, message);
    });
  }

  /** The first frame must be a hello with the secret and our protocol; anything else ends the connection. */
  private greet(conn: HostSocket, message: HostMessage): HostPeer | null {
    const refuse = (reason: Refusal, text: string) => {
      conn.send({ type: "refused", reason, protocol: this.protocol, build: this.options.build, message: text });
      conn.end();
      return null;
    };
    if (message.type !== "hello") {
      conn.destroy();
      return null;
    }
    if (!secretsEqual(message.secret, this.secret)) {
      this.log(`refused a peer (pid ${message.pid}): wrong secret`);
      return refuse(Refusal.SECRET, "wrong secret");
    }
    if (message.protocol !== this.protocol) {
      this.log(`refused pid ${message.pid} (${message.build}): it speaks protocol ${message.protocol}, this host ${this.protocol}`);
      return refuse(Refusal.PROTOCOL, `this session host speaks protocol ${this.protocol}`);
    }
    if (this.ending) return refuse(Refusal.ENDING, "the session host is ending");
    if (message.role === PeerRole.SERVER && this.serverPeer) {
      return refuse(Refusal.BUSY, `another webmux serve (pid ${this.serverPeer.pid}) is using this session host`);
    }
    conn.trust();
    const peer: HostPeer = {
      role: message.role,
      pid: message.pid,
      build: message.build,
      socket: conn,
      send: (m) => conn.send(m),
      emit: (name, body, data = new Uint8Array(0)) => conn.send({ type: "event", name, body, data }),
    };
    this.peers.add(peer);
    if (peer.role === PeerRole.SERVER) {
      this.serverPeer = peer;
      this.hadServer = true;
      this.log(`server pid ${peer.pid} (${peer.build}) connected`);
    }
    conn.send({
      type: "welcome",
      protocol: this.protocol,
      build: this.options.build,
      pid: process.pid,
      hostId: this.id,
      sessions: this.service.sessionCount(),
      runtime: process.versions.bun ? `bun ${process.versions.bun}` : `node ${process.versions.node}`,
    });
    this.service.peerJoined(peer);
    return peer;
  }

  /**
   * A build of another protocol asks for the sessions (docs/design.md, What survives a restart):
   * stop listening, start the successor it names with every terminal, and answer once the
   * successor listens with them. Any failure leaves everything as it was, listening again.
   */
  private async handOver(conn: HostSocket, message: Extract<HostMessage, { type: "handover" }>): Promise<void> {
    const refuse = (reason: Refusal, text: string) => {
      conn.send({ type: "refused", reason, protocol: this.protocol, build: this.options.build, message: text });
      conn.end();
    };
    if (!secretsEqual(message.secret, this.secret)) return refuse(Refusal.SECRET, "wrong secret");
    const handover = this.options.handover;
    if (!handover) return refuse(Refusal.HANDOVER, `this session host (${this.options.build}) cannot hand its sessions over`);
    if (this.ending) return refuse(Refusal.ENDING, "the session host is ending");
    if (this.serverPeer) return refuse(Refusal.BUSY, `another webmux serve (pid ${this.serverPeer.pid}) is using this session host`);
    const paths = this.paths;
    if (!paths || !takeStartLock(paths)) return refuse(Refusal.HANDOVER, "another session host is starting");
    this.log(`handing the sessions over to ${message.build} (protocol ${message.protocol}), asked by pid ${message.pid}`);
    this.ending = true;
    if (this.firstServerTimer) clearTimeout(this.firstServerTimer);
    this.firstServerTimer = null;
    for (const peer of this.peers) peer.socket.end();
    // Stops accepting at once (its callback would wait for this very connection to close).
    this.listener?.close();
    this.listener = null;
    try {
      const done = await handover(message.successor);
      this.exited = true; // never unlinks the socket: it is the successor's now
      conn.send({ type: "handed-over", pid: done.pid, sessions: done.sessions, message: "" });
      conn.end();
      void done.reaped.then(() => {
        this.log("the last handed-over program ended");
        this.options.onExit?.("handed over");
      });
    } catch (err) {
      this.log(`handover failed: ${(err as Error).message}`);
      try {
        unlinkSync(paths.socket);
      } catch {
        // none
      }
      try {
        this.secret = writeSecret(paths); // a successor that failed may have written its own
        await this.listen(paths);
      } catch (listenErr) {
        this.log(`cannot listen again after the failed handover: ${(listenErr as Error).message}`);
      } finally {
        releaseStartLock(paths);
      }
      this.ending = false;
      refuse(Refusal.HANDOVER, (err as Error).message);
      this.checkIdle("no server connected after a failed handover");
    }
  }

  private dispatch(peer: HostPeer, message: HostMessage): void {
    if (message.type === "input") {
      try {
        this.service.input(peer, message.ref, message.flags, message.data);
      } catch (err) {
        this.log(`input failed: ${(err as Error).stack ?? err}`);
      }
      return;
    }
    if (message.type !== "request") return; // a peer sends requests and input only
    const { id, method, params, data } = message;
    if (method === "stop") {
      void this.stop(`webmux stop (pid ${peer.pid})`).then((ended) => peer.send({ type: "reply", id, ok: true, result: { ended }, data: new Uint8Array(0) }));
      return;
    }
    const answer = (ok: boolean, result: unknown, bytes: Uint8Array = new Uint8Array(0)) => peer.send({ type: "reply", id, ok, result, data: bytes });
    const fail = (err: unknown) => {
      if (err instanceof HostRequestError) answer(false, { code: err.code, message: err.message });
      else {
        this.log(`${method} failed: ${(err as Error).stack ?? err}`);
        answer(false, { code: "INTERNAL", message: (err as Error).message });
      }
    };
    try {
      const reply = this.service.handle(peer, method, params, data);
      if (reply instanceof Promise) reply.then((r) => answer(true, r.result, r.data), fail);
      else answer(true, reply.result, reply.data);
    } catch (err) {
      fail(err);
    }
  }

  private leave(peer: HostPeer): void {
    if (!this.peers.delete(peer)) return;
    if (peer === this.serverPeer) {
      this.serverPeer = null;
      this.log(`server pid ${peer.pid} disconnected`);
    }
    this.service.peerLeft(peer);
    if (peer.role === PeerRole.SERVER) this.checkIdle("the server left and no session runs");
  }

  /** Exit when nothing would be lost: no server, and no session holding work. Call after any change. */
  checkIdle(reason: string): void {
    if (this.ending || this.exited || this.serverPeer) return;
    if (!this.hadServer && this.firstServerTimer) return;
    if (this.service.holdsWork()) return;
    void this.exit(reason);
  }

  /** End every session, then exit; resolves with how many sessions were ended. */
  async stop(reason: string): Promise<number> {
    if (this.ending) return 0;
    this.ending = true;
    this.log(`stopping: ${reason}`);
    const ended = await this.service.endAll();
    this.log(`ended ${ended} session(s)`);
    // The reply to `stop` is sent before the connections close.
    setImmediate(() => void this.exit(reason));
    return ended;
  }

  private async exit(reason: string): Promise<void> {
    if (this.exited) return;
    this.exited = true;
    this.ending = true;
    if (this.firstServerTimer) clearTimeout(this.firstServerTimer);
    // The socket goes first, so a server starting now spawns a new host instead of reaching this one.
    if (this.paths) {
      try {
        unlinkSync(this.paths.socket);
      } catch {
        // gone already
      }
    }
    await new Promise<void>((resolve) => {
      if (!this.listener) return resolve();
      this.listener.close(() => resolve());
      for (const peer of this.peers) peer.socket.end();
      setTimeout(() => {
        for (const peer of this.peers) peer.socket.destroy();
      }, 1000).unref?.();
    });
    this.log(`exiting: ${reason}`);
    this.options.onExit?.(reason);
  }
}
