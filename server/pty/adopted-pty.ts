/**
 * A PTY this process did not spawn (docs/design.md, What survives a restart): a session host that
 * took a running program over from its predecessor holds the terminal's master descriptor it
 * inherited. It reads and writes that descriptor and resizes it through node-pty's native module
 * (which resizes any descriptor). The program is not its child, so its exit status comes from
 * the process that waits for it (the predecessor, staying on as a reaper) through `reaped`.
 * Node only: Bun has no tty stream over a descriptor it did not open.
 */
import { closeSync, constants as fsConstants, openSync, readSync } from "node:fs";
import { createRequire } from "node:module";
import { ReadStream } from "node:tty";
import { writeSome } from "webmux-fd-flags";
import { EXIT_DRAIN_MAX_BYTES, stopReadStream } from "./node-pty.ts";
import { PtyInputQueue } from "./pty-input-queue.ts";
import type { PtyExit, PtyHandover, PtyProcess } from "./pty.ts";
import { PtyEventRelay, signalProcessGroup } from "./pty-support.ts";

/** Read size for the final drain after the exit; matches libuv's read buffer. */
const EXIT_DRAIN_READ_BYTES = 64 * 1024;

type NativePty = { resize(fd: number, cols: number, rows: number): void };
let native: NativePty | null = null;

/** node-pty's native module (resize by descriptor), loaded the way node-pty itself loads it. */
function nativePty(): NativePty {
  if (native) return native;
  const require = createRequire(import.meta.url);
  const utils = require("node-pty/lib/utils.js") as { loadNativeModule(name: string): { module: NativePty } };
  native = utils.loadNativeModule("pty").module;
  return native;
}

export type AdoptPtyOptions = {
  /** the inherited master descriptor; this PTY owns it from now on */
  fd: number;
  /** the program's pid (its process group leader) */
  pid: number;
  /** the program side, held open here so the master never hangs up before the tail is read (see node-pty.ts) */
  ptsName: string | null;
};

/**
 * A PtyProcess over an inherited terminal. Nothing is read before `begin` (a successor that gives
 * up before it holds the sessions has taken no byte from the terminal); `reaped` reports the
 * program's exit when its waiter saw it.
 */
export type AdoptedPty = PtyProcess & { begin(): void; reaped(exit: PtyExit): void };

export function adoptPty(options: AdoptPtyOptions): AdoptedPty {
  const { fd, pid } = options;
  const resize = nativePty().resize;
  const relay = new PtyEventRelay();
  let slave: number | null = null;
  if (options.ptsName) {
    try {
      slave = openSync(options.ptsName, fsConstants.O_RDWR | fsConstants.O_NOCTTY);
    } catch {
      slave = null;
    }
  }
  let socket: ReadStream | null = null;
  let released = false;
  let readEnded = false;
  let paused = false;
  const begin = () => {
    if (socket || released) return;
    socket = new ReadStream(fd);
    socket.on("data", (chunk: Buffer) => relay.deliverData(chunk));
    socket.on("error", () => (readEnded = true)); // EIO: the program side is closed everywhere
    socket.on("end", () => (readEnded = true));
    if (paused) socket.pause();
  };

  // Written from the main thread only, asking first whether the descriptor is still this terminal's
  // (PtyInputQueue says why).
  const input = new PtyInputQueue(
    (bytes) => writeSome(fd, bytes),
    () => !released && !(socket?.destroyed ?? false),
  );

  const closeSlave = () => {
    if (slave === null) return;
    try {
      closeSync(slave);
    } catch {
      // closed already
    }
    slave = null;
  };

  /** After the exit: what the stream holds, then what the kernel holds, then the exit. */
  const finish = (exit: PtyExit) => {
    if (relay.hasExited) return;
    if (!released) {
      if (socket) stopReadStream(socket);
      let drained = 0;
      while (!readEnded && drained < EXIT_DRAIN_MAX_BYTES) {
        const buffer = Buffer.allocUnsafe(EXIT_DRAIN_READ_BYTES);
        let n: number;
        try {
          n = readSync(fd, buffer, 0, buffer.length, null);
        } catch {
          break; // EAGAIN: nothing more; EIO: the other side is gone and drained
        }
        if (n <= 0) break;
        drained += n;
        relay.deliverData(Buffer.from(buffer.subarray(0, n)));
      }
      released = true;
      input.close();
      closeSlave();
      if (socket) socket.destroy();
      else closeQuietly(fd);
    }
    relay.deliverExit(exit);
  };

  return {
    pid,
    exited: relay.exited,
    onData: (listener) => relay.onData(listener),
    onExit: (listener) => relay.onExit(listener),
    begin,
    reaped: finish,
    write(data) {
      if (relay.hasExited || released) return;
      input.write(typeof data === "string" ? Buffer.from(data, "utf8") : data);
    },
    drained() {
      return relay.hasExited || released ? Promise.resolve() : input.drained();
    },
    resize(cols, rows) {
      if (relay.hasExited || released) return;
      if (!Number.isInteger(cols) || !Number.isInteger(rows) || cols < 1 || rows < 1) {
        throw new RangeError(`PTY size must be positive integers, got ${cols}x${rows}`);
      }
      try {
        resize(fd, cols, rows);
      } catch {
        // the terminal is going away with its program; the exit is on its way
      }
    },
    pause() {
      paused = true;
      if (!released) socket?.pause();
    },
    resume() {
      paused = false;
      if (!released) socket?.resume();
    },
    kill(signal = "SIGHUP") {
      if (relay.hasExited) return;
      signalProcessGroup(pid, signal);
    },
    async handover(): Promise<PtyHandover | null> {
      if (relay.hasExited || released) return null;
      await this.drained();
      if (relay.hasExited || released || input.pendingBytes > 0) return null;
      const reading = socket;
      if (reading) stopReadStream(reading);
      return {
        fd,
        ptsName: options.ptsName,
        release() {
          released = true;
          input.close();
          closeSlave();
          if (reading) reading.destroy();
          else closeQuietly(fd);
        },
        abort() {
          if (reading && !paused) reading.resume();
        },
      };
    },
  };
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // closed already
  }
}
