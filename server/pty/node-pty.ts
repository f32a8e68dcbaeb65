/**
 * PtyProcess on node-pty, for Node. (Not for Bun: there node-pty's child gets SIGHUP.)
 *
 * Output stays bytes end to end (`encoding: null`), and the exit is reported only after the
 * read side of the PTY has drained, also when the session had paused reading at the moment
 * the program ended. See ReadSideKeeper for why node-pty alone does not guarantee that.
 * Cost: the exit is reported ~200 ms after the program ended (node-pty's close timeout).
 */
import { closeSync, constants as fsConstants, openSync, readSync } from "node:fs";
import type { Socket } from "node:net";
import { spawn as forkPty, type IPty } from "node-pty";
import { setCloseOnExec, setCloseOnExecFrom, writeSome } from "webmux-fd-flags";
import { readIntoOwnBuffer } from "./own-read-buffer.ts";
import { PtyInputQueue } from "./pty-input-queue.ts";
import { PTY_TERM_NAME, PtySpawnError, type PtyHandover, type PtyProcess, type PtySpawnOptions } from "./pty.ts";
import { assertSpawnable, childEnvironment, PtyEventRelay, signalProcessGroup, toPtyExit } from "./pty-support.ts";

/**
 * Most bytes read directly from the master after the exit: a terminal buffers a few KB in the
 * kernel (about 8 KB measured here), so anything far beyond is a background process that
 * inherited the terminal and keeps printing.
 */
export const EXIT_DRAIN_MAX_BYTES = 1 << 20;
/**
 * How long a session that is still paused after the program ended keeps the rest waiting; then
 * it is delivered anyway (a few KB), so the exit is never held back by a consumer that stalled.
 */
export const PAUSED_EXIT_HOLD_MS = 5_000;
/** Descriptors from here up are the server's own, never a session's (0, 1, 2 are its terminal). */
const FIRST_NON_STDIO_FD = 3;
/** Read size for that final drain; matches libuv's read buffer. */
const EXIT_DRAIN_READ_BYTES = 64 * 1024;

/** A handover waits this long for queued input to reach the program; a program that reads nothing keeps the PTY here. */
export const HANDOVER_WRITE_WAIT_MS = 2_000;

/**
 * Stop a terminal's read stream for good and deliver what it read but has not emitted yet, so
 * that the bytes delivered so far are exactly the bytes taken from the kernel (docs/design.md,
 * What survives a restart: the successor reads on from there). A paused stream keeps reading
 * into its buffer, so the handle itself is stopped; `read()` hands the buffer out as 'data'
 * (it may restart the handle, which is stopped again before the event loop could read anything).
 */
export function stopReadStream(socket: Socket): void {
  const handle = (socket as unknown as { _handle?: { readStop?: () => number; reading?: boolean } })._handle;
  const stop = () => {
    if (!handle?.readStop) return;
    handle.readStop();
    handle.reading = false;
  };
  socket.pause();
  stop();
  while (socket.read() !== null) {
    // each read() emits its chunk as 'data'
  }
  stop();
}

export function spawnNodePty(options: PtySpawnOptions): PtyProcess {
  assertSpawnable(options);
  const [file, ...args] = options.command as [string, ...string[]];
  let term: IPty;
  try {
    // docs/design.md, Runtimes: node-pty and Bun — node-pty forks without closing or flagging the
    // server's descriptors, and creates each master without FD_CLOEXEC: without this, every session
    // (and any process the server starts later) would hold the masters of the sessions before it.
    setCloseOnExecFrom(FIRST_NON_STDIO_FD);
    term = forkPty(file, args, {
      name: PTY_TERM_NAME,
      cwd: options.cwd,
      env: childEnvironment(options),
      cols: options.cols,
      rows: options.rows,
      // Raw bytes: nothing is decoded on the hot path, and a UTF-8 sequence split across
      // reads stays intact for whoever decodes it later.
      encoding: null,
    });
  } catch (err) {
    throw new PtySpawnError("PTY_SPAWN_FAILED", `cannot start ${file}: ${(err as Error).message}`, { cause: err });
  }

  const master = (term as unknown as { fd?: number }).fd;
  if (typeof master === "number") setCloseOnExec(master);

  const relay = new PtyEventRelay();
  /** the terminal went to a successor host: nothing is read, written or resized here any more */
  let handedOver = false;
  const keeper = new ReadSideKeeper(
    term,
    (chunk) => relay.deliverData(chunk),
    () => term.resume(),
  );
  const socket = (term as unknown as { _socket?: Socket })._socket;
  // Lent: the session copies each read into its ring once and hands on the ring's bytes.
  const leanRead = socket !== undefined && readIntoOwnBuffer(socket, (chunk) => relay.deliverData(chunk, true), true);
  // With `encoding: null` node-pty emits Buffers; its typings still say string.
  if (!leanRead) term.onData((data) => relay.deliverData(data as unknown as Buffer));
  // Input goes to the master from the main thread only (PtyInputQueue says why); node-pty's own
  // queue, which writes from the thread pool, stays empty. Without its socket or descriptor (a
  // node-pty this code does not know), node-pty's write path stays.
  const input =
    socket !== undefined && typeof master === "number" ? new PtyInputQueue((bytes) => writeSome(master, bytes), () => !socket.destroyed) : null;
  term.onExit(({ exitCode, signal }) => {
    input?.close();
    keeper.dispose();
    relay.deliverExit(toPtyExit(exitCode, signal));
  });

  return {
    pid: term.pid,
    exited: relay.exited,
    onData: (listener) => relay.onData(listener),
    onLentData: (listener) => relay.onLentData(listener),
    onExit: (listener) => relay.onExit(listener),
    write(data) {
      if (relay.hasExited || handedOver) return;
      const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
      if (input) input.write(bytes);
      else term.write(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    },
    drained() {
      return input && !relay.hasExited ? input.drained() : Promise.resolve();
    },
    resize(cols, rows) {
      if (relay.hasExited || handedOver) return;
      if (!Number.isInteger(cols) || !Number.isInteger(rows) || cols < 1 || rows < 1) {
        throw new RangeError(`PTY size must be positive integers, got ${cols}x${rows}`);
      }
      try {
        term.resize(cols, rows);
      } catch {
        // The descriptor closed as the program ended; the exit is on its way.
      }
    },
    pause() {
      if (handedOver) return;
      term.pause();
      keeper.setPaused(true);
    },
    resume() {
      if (handedOver) return;
      keeper.setPaused(false);
      term.resume();
    },
    kill(signal = "SIGHUP") {
      if (relay.hasExited) return;
      signalProcessGroup(term.pid, signal);
    },
    async handover(): Promise<PtyHandover | null> {
      const unix = term as unknown as { _socket?: Socket; _writeStream?: { dispose?: () => void }; ptsName?: string };
      const socket = unix._socket;
      if (relay.hasExited || keeper.exiting || handedOver || typeof master !== "number" || !socket) return null;
      // Input still queued goes to the program first: the successor starts with an empty queue.
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([input?.drained(), new Promise<void>((resolve) => (timer = setTimeout(resolve, HANDOVER_WRITE_WAIT_MS)))]);
      clearTimeout(timer);
      if (relay.hasExited || keeper.exiting || (input !== null && input.pendingBytes > 0)) return null;
      stopReadStream(socket);
      keeper.setPaused(true);
      if (relay.hasExited || keeper.exiting) {
        keeper.setPaused(false);
        term.resume();
        return null;
      }
      return {
        fd: master,
        ptsName: typeof unix.ptsName === "string" ? unix.ptsName : null,
        release() {
          handedOver = true;
          // Closes the kept program side; the socket's destroy now really closes the master.
          input?.close();
          keeper.dispose();
          unix._writeStream?.dispose?.();
          socket.destroy();
        },
        abort() {
          keeper.setPaused(false);
          term.resume();
        },
      };
    },
  };
}

/**
 * Makes sure every byte the program wrote is delivered before node-pty reports the exit.
 *
 * Two things lose the tail of the output with node-pty alone (both measured here):
 * 1. When the program's side of the terminal closes, the master polls as hung up; libuv then
 *    takes its next short read for EOF although the kernel still holds output. A program that
 *    writes 5 MB and exits lost 2-10 KB most runs. Holding our own descriptor of the terminal's
 *    program side open keeps the master from ever hanging up, so libuv keeps reading normally.
 * 2. If the exit comes before the read side closed, node-pty destroys its socket 200 ms later,
 *    dropping what is unread: all of it when the session had paused reading. node-pty does that
 *    with `socket.destroy()` without an argument; that one call is intercepted. The master is
 *    then read directly until the kernel has nothing more (EAGAIN), after a resume if paused,
 *    and only then the socket is destroyed, which makes node-pty report the exit.
 * EOF and read errors still close the socket at once.
 *
 * It reaches into node-pty's UnixTerminal (`_socket`, `fd`, `ptsName`); if those ever go away
 * it degrades to node-pty's own behaviour and the tail tests in node-pty.test.ts fail.
 */
class ReadSideKeeper {
  private readonly socket: Socket | null = null;
  private readonly masterFd: number | null = null;
  private slaveFd: number | null = null;
  private destroySocket: () => void = () => {};
  private exitPending = false;
  private paused = false;
  private released = false;
  private holdTimer: ReturnType<typeof setTimeout> | undefined;
  private holdExpired = false;

  constructor(
    term: IPty,
    private readonly deliver: (chunk: Buffer) => void,
    private readonly resumeReading: () => void,
  ) {
    const unix = term as unknown as { _socket?: Socket; fd?: number; ptsName?: string };
    if (typeof unix.ptsName === "string") {
      try {
        // O_NOCTTY: never become this server's controlling terminal. Node opens with O_CLOEXEC,
        // so other children do not inherit it.
        this.slaveFd = openSync(unix.ptsName, fsConstants.O_RDWR | fsConstants.O_NOCTTY);
      } catch {
        this.slaveFd = null;
      }
    }
    if (typeof unix.fd === "number") this.masterFd = unix.fd;
    const socket = unix._socket;
    if (!socket || typeof socket.destroy !== "function") return;
    this.socket = socket;
    const destroy = socket.destroy.bind(socket);
    this.destroySocket = () => void destroy();
    socket.destroy = ((error?: Error) => {
      if (error !== undefined || socket.readableEnded || this.released) return destroy(error);
      this.exitPending = true;
      this.drainAndRelease();
      return socket;
    }) as Socket["destroy"];
    // node-pty learns of the exit and then waits 200 ms (its close timeout) before destroying the
    // socket; the one sign of the exit before that is the `once("close")` it registers at that
    // moment. Draining right away reports the exit 200 ms sooner, with the same guarantees.
    const emitter = term as unknown as { once?: (event: string, listener: (...args: unknown[]) => void) => unknown };
    if (typeof emitter.once === "function") {
      const once = emitter.once.bind(term);
      emitter.once = (event, listener) => {
        const result = once(event, listener);
        if (event === "close" && !this.released && !this.exitPending) {
          this.exitPending = true;
          setImmediate(() => this.drainAndRelease());
        }
        return result;
      };
    }
  }

  setPaused(paused: boolean): void {
    this.paused = paused;
    if (!this.exitPending) return;
    // After the stream re-emitted what it buffered while paused (it does so on a later tick).
    setImmediate(() => this.drainAndRelease());
  }

  /** The exit was reported: nothing more to keep open. */
  dispose(): void {
    this.released = true;
    clearTimeout(this.holdTimer);
    this.closeSlave();
  }

  /** node-pty has seen the program end and its exit is on its way. */
  get exiting(): boolean {
    return this.exitPending;
  }

  /** Paused now, unless the hold for this exit has run out. */
  private get holding(): boolean {
    return this.paused && !this.holdExpired;
  }

  /** One deadline per exit, however often the session toggles pause meanwhile. */
  private startHold(): void {
    if (this.holdTimer !== undefined) return;
    this.holdTimer = setTimeout(() => {
      this.holdExpired = true;
      this.resumeReading();
      setImmediate(() => this.drainAndRelease());
    }, PAUSED_EXIT_HOLD_MS);
  }

  private drainAndRelease(): void {
    if (this.released) return;
    if (this.holding) return this.startHold();
    if (this.socket && this.socket.readableLength > 0) {
      setImmediate(() => this.drainAndRelease());
      return;
    }
    let drained = 0;
    while (this.masterFd !== null && drained < EXIT_DRAIN_MAX_BYTES) {
      const buffer = Buffer.allocUnsafe(EXIT_DRAIN_READ_BYTES);
      let n: number;
      try {
        n = readSync(this.masterFd, buffer, 0, buffer.length, null);
      } catch {
        break; // EAGAIN: the kernel holds nothing more; EIO: the other side is gone and drained
      }
      if (n <= 0) break;
      drained += n;
      this.deliver(Buffer.from(buffer.subarray(0, n)));
      if (this.holding) return this.startHold(); // the session pushed back from inside deliver
    }
    this.released = true;
    clearTimeout(this.holdTimer);
    this.closeSlave();
    this.destroySocket();
  }

  private closeSlave(): void {
    if (this.slaveFd === null) return;
    try {
      closeSync(this.slaveFd);
    } catch {
      // already closed
    }
    this.slaveFd = null;
  }
}
