/**
 * A channel for handing descriptors to another process of this user (docs/design.md, The session
 * host serves the streams): a Unix SOCK_SEQPACKET socket in the host's directory, each message a
 * record of bytes with the descriptors that ride on it (SCM_RIGHTS, `server/native/fd-pass`). A
 * peer of another uid is refused at accept (SO_PEERCRED), before anything it sends is read. A
 * message that does not fit, or carries anything but descriptors, is dropped with its descriptors
 * closed; a descriptor the receiver's handler does not take is closed too. So garbage on the channel
 * never throws out of it and never leaks a descriptor.
 *
 * Node only: Bun aborts the process at libuv's poll (which the channel needs to learn of a message),
 * and Bun's net.Socket does not read a TCP descriptor it is given. `fdPassingSupported()` says
 * which; without it the server keeps the relay path.
 */
import { EventEmitter } from "node:events";
import { unlinkSync } from "node:fs";
import { createRequire } from "node:module";
import { Socket } from "node:net";
import type * as FdPass from "webmux-fd-pass";

type FdPassModule = typeof FdPass;

let loaded: FdPassModule | null | undefined;

/** The native module, or null where it is not built or cannot run (Bun). */
function native(): FdPassModule | null {
  if (loaded !== undefined) return loaded;
  loaded = null;
  if (process.versions.bun || process.platform !== "linux") return loaded;
  try {
    loaded = createRequire(import.meta.url)("webmux-fd-pass") as FdPassModule;
  } catch {
    loaded = null;
  }
  return loaded;
}

/** Whether this process can hand and take descriptors (Node on Linux, with the helper built). */
export function fdPassingSupported(): boolean {
  return native() !== null;
}

function required(): FdPassModule {
  const fp = native();
  if (!fp) throw new Error("handing descriptors needs Node on Linux with server/native/fd-pass built");
  return fp;
}

export type FdChannelEvents = {
  /** one message; `fds` are this process's now: take them or they are closed after the handler returns */
  message: [data: Buffer, fds: FdHandoff];
  /** a message was dropped (did not fit, or carried other control data) */
  dropped: [];
  closed: [];
};

/** The descriptors of one received message; whatever is not `take`n is closed once the handler returns. */
export class FdHandoff {
  private readonly left: Set<number>;
  constructor(readonly fds: readonly number[]) {
    this.left = new Set(fds);
  }
  get count(): number {
    return this.fds.length;
  }
  /** Take descriptor `index` (its closing is the caller's from now on). */
  take(index: number): number {
    const fd = this.fds[index];
    if (fd === undefined || !this.left.delete(fd)) throw new RangeError(`no descriptor ${index} left in this message`);
    return fd;
  }
  /** Close every descriptor not taken. */
  closeRest(): void {
    for (const fd of this.left) closeQuietly(fd);
    this.left.clear();
  }
}

/** Close a descriptor of this module's that may be closed already. */
function closeQuietly(fd: number): void {
  try {
    required().closeFd(fd);
  } catch {
    // closed already
  }
}

/** One connected end of the channel. */
export class FdChannel {
  readonly events = new EventEmitter<FdChannelEvents>();
  private watch: FdPass.Watch | null = null;
  private fd: number;

  /** Connect to a listener at `path`. */
  static connect(path: string): FdChannel {
    return new FdChannel(required().connect(path));
  }

  constructor(fd: number) {
    this.fd = fd;
    const fp = required();
    this.watch = fp.watchReadable(fd, () => this.readable());
  }

  get closed(): boolean {
    return this.fd < 0;
  }

  /** The uid of the process at the other end. */
  peerUid(): number {
    return required().peerUid(this.fd);
  }

  /** Send `data` (1 B–64 KiB) with `fds` attached; the caller's copies stay open. Throws once closed. */
  send(data: Uint8Array, fds: readonly number[] = []): void {
    if (this.fd < 0) throw new Error("the descriptor channel is closed");
    required().sendFds(this.fd, [...fds], data);
  }

  /** Hand a connected socket over: its descriptor rides on `data`; the local socket is then destroyed. */
  handSocket(socket: Socket, data: Uint8Array): void {
    const fd = socketFd(socket);
    if (fd === null) throw new Error("the socket has no descriptor to hand over");
    this.send(data, [fd]);
    socket.destroy(); // this process's copy only: the receiver holds its own
  }

  close(): void {
    if (this.fd < 0) return;
    if (this.watch) required().unwatch(this.watch);
    this.watch = null;
    closeQuietly(this.fd);
    this.fd = -1;
    this.events.emit("closed");
  }

  private readable(): void {
    const fp = required();
    // Every waiting message in one turn; a poll error or the end of the connection closes the channel.
    while (this.fd >= 0) {
      let message: ReturnType<FdPassModule["receiveFds"]>;
      try {
        message = fp.receiveFds(this.fd);
      } catch {
        this.close();
        return;
      }
      if (message === null) return;
      if (message === false) {
        this.close();
        return;
      }
      if (message.dropped) {
        this.events.emit("dropped");
        continue;
      }
      const handoff = new FdHandoff(message.fds);
      try {
        this.events.emit("message", message.data, handoff);
      } catch {
        // a handler that throws loses its message, never the channel
      } finally {
        handoff.closeRest();
      }
    }
  }
}

/** Where the channel listens: a private socket that refuses peers of another uid. */
export class FdListener {
  readonly events = new EventEmitter<{ channel: [FdChannel]; refused: [uid: number] }>();
  private fd: number;
  private readonly watch: FdPass.Watch;

  constructor(readonly path: string) {
    const fp = required();
    try {
      unlinkSync(path); // left by a process that died
    } catch {
      // none
    }
    this.fd = fp.listen(path);
    this.watch = fp.watchReadable(this.fd, () => this.acceptAll());
  }

  /** Stop listening; the socket's path is removed unless `keepPath` (another process listens there now). */
  close(options: { keepPath?: boolean } = {}): void {
    if (this.fd < 0) return;
    const fp = required();
    fp.unwatch(this.watch);
    fp.closeFd(this.fd);
    this.fd = -1;
    if (options.keepPath) return;
    try {
      unlinkSync(this.path);
    } catch {
      // gone already
    }
  }

  private acceptAll(): void {
    const fp = required();
    const ownUid = process.getuid?.();
    while (this.fd >= 0) {
      let conn: number;
      try {
        conn = fp.accept(this.fd);
      } catch {
        return;
      }
      if (conn < 0) return;
      let uid: number;
      try {
        uid = fp.peerUid(conn);
      } catch {
        fp.closeFd(conn);
        continue;
      }
      if (ownUid !== undefined && uid !== ownUid) {
        fp.closeFd(conn);
        this.events.emit("refused", uid);
        continue;
      }
      this.events.emit("channel", new FdChannel(conn));
    }
  }
}

/** The descriptor under a connected net.Socket (Node keeps it on its handle), or null. */
export function socketFd(socket: Socket): number | null {
  const fd = (socket as unknown as { _handle?: { fd?: number } })._handle?.fd;
  return typeof fd === "number" && fd >= 0 ? fd : null;
}

/** A handed TCP descriptor as a Node socket (it owns the descriptor from now on). */
export function socketFromFd(fd: number): Socket {
  return new Socket({ fd, readable: true, writable: true });
}
