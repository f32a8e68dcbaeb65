/**
 * A PTY this process did not spawn (docs/design.md, What survives a restart): a session host that
 * took a running program over from its predecessor holds the terminal's master descriptor it
 * inherited. It reads and writes that descriptor and resizes it through node-pty's native module
 * (which resizes any descriptor). The program is not its child, so its exit status comes from
 * the process that waits for it (the predecessor, staying on as a reaper) through `reaped`.
 * Node only: Bun has no tty stream over a descriptor it did not open.
 */
import { closeSync, constants as fsConstants, openSync, readSync, write as writeAsync, writeSync } from "node:fs";
import { createRequire } from "node:module";
import { ReadStream } from "node:tty";
import { EXIT_DRAIN_MAX_BYTES, stopReadStream } from "./node-pty.ts";
import type { PtyExit, PtyHandover, PtyProcess } from "./pty.ts";
import { PtyEventRelay, signalProcessGroup } from "./pty-support.ts";

/** Read size for the final drain after the exit; matches libuv's read buffer. */
const EXIT_DRAIN_READ_BYTES = 64 * 1024;
/** How often a pending write queue is looked at (as for a spawned PTY). */
const DRAIN_POLL_MS = 2;

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

  const queue: Buffer[] = [];
  let writing = false;
  const pump = () => {
    const head = queue[0];
    if (!head || released) {
      writing = false;
      return;
    }
    writing = true;
    writeAsync(fd, head, (err, written) => {
      if (err) {
        if ((err as NodeJS.ErrnoException).code === "EAGAIN") setImmediate(pump);
        else {
          queue.length = 0;
          writing = false;
        }
        return;
      }
      if (written < head.length) queue[0] = head.subarray(written);
      else queue.shift();
      pump();
    });
  };

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
      const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
      if (bytes.length === 0) return;
      if (queue.length === 0 && !writing) {
        // A keystroke goes straight to the master (non-blocking); what the kernel refuses is queued.
        let written = 0;
        try {
          written = writeSync(fd, bytes);
        } catch {
          written = 0;
        }
        if (written === bytes.length) return;
        queue.push(Buffer.from(bytes.subarray(written)));
      } else queue.push(Buffer.from(bytes));
      if (!writing) pump();
    },
    drained() {
      return new Promise((resolve) => {
        const check = () => {
          if ((queue.length === 0 && !writing) || relay.hasExited || released) resolve();
          else setTimeout(check, DRAIN_POLL_MS);
        };
        check();
      });
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
      if (relay.hasExited || released || queue.length > 0) return null;
      const reading = socket;
      if (reading) stopReadStream(reading);
      return {
        fd,
        ptsName: options.ptsName,
        release() {
          released = true;
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
