/**
 * The terminal stream without a server or a socket: a real Session on a fake PTY, connections on
 * recording sockets, every frame decoded with the contract. The integration tests
 * (terminal-stream.test.ts and its neighbours) prove the same rules over real WebSockets; these
 * pin the orderings and thresholds byte for byte (docs/protocol.md § Attach and replay order,
 * docs/design.md § Resume and replay, § Back-pressure, § Control).
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  encodeControl,
  encodeInput,
  encodePosition,
  encodeResize,
  encodeResync,
  encodeSnapshot,
  encodeSubmit,
  encodeTakeControl,
  encodeAutoReply,
  type ServerMessage,
} from "../contract/frames.ts";
import { CloseCode } from "../contract/protocol.ts";
import type { PositionPayload } from "../contract/types.ts";
import { Session } from "../session/session.ts";
import { fakePtys } from "../testing/fake-pty.ts";
import { RecordingSocket } from "../testing/recording-socket.ts";
import { waitFor } from "../testing/wait.ts";
import {
  COALESCE_WINDOW_MS,
  COMPRESSED_COALESCE_WINDOW_MS,
  FLUSH_BYTES,
  PAUSE_HIGH_WATER_BYTES,
  PAUSE_LOW_WATER_BYTES,
  SEND_QUEUE_LIMIT_BYTES,
  SLOW_CHECK_INTERVAL_MS,
  WRITE_DRAIN_TIMEOUT_MS,
} from "./flow-control.ts";
import { TerminalConnection } from "./terminal-connection.ts";
import { TerminalStream, type AttachOptions } from "./terminal-stream.ts";

type Join = {
  clientId?: string;
  canControl?: boolean;
  resume?: AttachOptions["resume"];
  history?: boolean;
  /** the peer reads every frame at once; false: the test drains it */
  autoDrain?: boolean;
  /** the socket negotiated permessage-deflate */
  compressed?: boolean;
};

type Client = { socket: RecordingSocket; conn: TerminalConnection; send: (frame: Uint8Array) => void };

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** A running session on a fake PTY with its stream; `emitted` is every byte the program wrote. */
function harness({ bufferBytes = 1024 * 1024, cols = 80, rows = 24 } = {}) {
  const ptys = fakePtys();
  let runs = 0;
  const session = new Session({
    id: "unit0001",
    command: ["prog"],
    cwd: "/",
    env: {},
    cols,
    rows,
    bufferBytes,
    spawnPty: ptys.spawn,
    nextGeneration: () => `boot.${++runs}`,
  });
  session.start();
  const stream = new TerminalStream(session);
  const emitted: Buffer[] = [];
  cleanups.push(async () => {
    stream.closeAll(CloseCode.NOT_FOUND, "test over");
    stream.dispose();
    await session.dispose();
  });
  let clients = 0;
  return {
    session,
    stream,
    pty: ptys.last,
    emit(data: string | Uint8Array) {
      const bytes = Buffer.from(data);
      emitted.push(bytes);
      ptys.last.emit(bytes);
    },
    get all(): Buffer {
      return Buffer.concat(emitted);
    },
    join({ clientId = `client-${++clients}`, canControl = true, resume = null, history = true, autoDrain = true, compressed = false }: Join = {}): Client {
      const socket = new RecordingSocket(autoDrain);
      if (compressed) socket.extensions = "permessage-deflate";
      const conn = new TerminalConnection(socket, clientId, clientId, canControl, {
        onDrain: (c) => stream.onDrain(c),
        onGone: (c) => stream.detach(c),
      });
      stream.attach(conn, { resume, history });
      return { socket, conn, send: (frame) => stream.handleFrame(conn, frame) };
    },
  };
}

/** One turn of the event loop: recording sockets' peers read, coalescing windows may pass. */
const turn = () => new Promise((resolve) => setImmediate(resolve));

const positions = (socket: RecordingSocket) =>
  socket.frames.flatMap((f) => (f.type === "position" ? [f.position] : []));

/** Where a client's screen is: its last position plus every output byte after it. */
function offsetOf(socket: RecordingSocket): { generation: string; offset: number } {
  const frames = socket.frames;
  const at = frames.findLastIndex((f) => f.type === "position");
  const position = (frames[at] as Extract<ServerMessage, { type: "position" }>).position;
  const base = position.mode === "append" ? position.start : position.end;
  return { generation: position.generation, offset: base + socket.output(at).length };
}

/** Every replay is complete (its status frame has been sent after its last position). */
const replayed = (socket: RecordingSocket) => {
  const types = socket.types();
  return types.lastIndexOf("status") > types.lastIndexOf("position");
};

/**
 * Each replay's frames come in the documented order, and between one position and the next the
 * client got each output byte once: a reset's live output from `end`, an append's from `start`.
 * Returns the offset the client reached.
 */
function checkStream(socket: RecordingSocket, all: Buffer): number {
  const frames = socket.frames;
  const starts = frames.flatMap((f, i) => (f.type === "position" ? [i] : []));
  let reached = 0;
  starts.forEach((at, k) => {
    const position = (frames[at] as Extract<ServerMessage, { type: "position" }>).position;
    expect(frames[at - 1]?.type, "a control frame just before each position").toBe("control");
    const next = starts[k + 1] ?? frames.length;
    const segment = frames.slice(at + 1, next - (k + 1 < starts.length ? 1 : 0));
    if (position.mode === "reset") {
      expect(segment[0]?.type, "a reset's snapshot right after its position: live output waited").toBe("snapshot");
      expect(segment[1]?.type).toBe("status");
      if (!position.truncated) expect(Buffer.from((segment[0] as { data: Uint8Array }).data).equals(all.subarray(0, position.end))).toBe(true);
      else expect(position.start).toBe(position.end);
    } else {
      const statusAt = segment.findIndex((f) => f.type === "status");
      expect(segment.slice(0, statusAt).every((f) => f.type === "output"), "an append is output then status").toBe(true);
    }
    const from = position.mode === "append" ? position.start : position.end;
    const out = Buffer.concat(segment.flatMap((f) => (f.type === "output" ? [f.data] : [])));
    expect(out.equals(all.subarray(from, from + out.length)), `replay ${k}: output from ${from} is the program's bytes`).toBe(true);
    if (k + 1 < starts.length) {
      // A resync flushes first: the next replay starts exactly where this one's live output ended.
      const following = (frames[starts[k + 1]!] as Extract<ServerMessage, { type: "position" }>).position;
      expect(from + out.length).toBe(following.end);
    }
    reached = from + out.length;
  });
  return reached;
}

describe("attach and replay order", () => {
  it("a fresh attach gets control, position, the raw output as snapshot and status, then live output", () => {
    const h = harness();
    h.emit("hello ");
    h.emit("\x1b[1mworld\x1b[0m");
    const a = h.join({ clientId: "client-a" });
    const end = h.all.length;
    const position: PositionPayload = { generation: "boot.1", mode: "reset", start: 0, end, truncated: false };
    expect(a.socket.types()).toEqual(["control", "position", "snapshot", "status"]);
    expect(a.socket.sent[1]).toEqual(encodePosition(position));
    expect(a.socket.sent[2]).toEqual(encodeSnapshot(h.all));
    const control = a.socket.frames[0] as Extract<ServerMessage, { type: "control" }>;
    expect(control.control).toMatchObject({ controller: { clientId: "client-a" }, cols: 80, rows: 24, colorSchemeReports: false });
    const status = a.socket.frames[3] as Extract<ServerMessage, { type: "status" }>;
    expect(status.session).toMatchObject({ id: "unit0001", generation: "boot.1", clients: 1, controller: { clientId: "client-a" } });
    h.emit("live");
    expect(a.socket.types().slice(4)).toEqual(["output"]);
    expect(a.socket.output().toString()).toBe("live");
  });

  it("append: exactly the missing bytes [offset, end) as one output frame, and none when nothing was missed", () => {
    const h = harness();
    h.emit("first part;");
    const resume = { generation: "boot.1", offset: h.all.length };
    h.emit("missed one;");
    h.emit("missed two;");
    const b = h.join({ resume });
    expect(b.socket.types()).toEqual(["control", "position", "output", "status"]);
    expect(positions(b.socket)[0]).toEqual({ generation: "boot.1", mode: "append", start: resume.offset, end: h.all.length, truncated: false });
    expect(b.socket.output().toString()).toBe("missed one;missed two;");
    const current = h.join({ resume: { generation: "boot.1", offset: h.all.length } });
    expect(current.socket.types()).toEqual(["control", "position", "status"]);
  });

  it("falls back to a reset for another run's generation or an offset the ring no longer has", async () => {
    const h = harness({ bufferBytes: 1024 });
    h.emit("x".repeat(600));
    const other = h.join({ resume: { generation: "boot.0", offset: 3 } });
    expect(positions(other.socket)[0]).toMatchObject({ mode: "reset", start: 0, end: 600, truncated: false });
    h.emit("y".repeat(600)); // the ring (1 KiB) drops its first bytes
    const lost = h.join({ resume: { generation: "boot.1", offset: 10 } });
    // Truncated: the retained bytes cannot be parsed from a cut, so the screen is made; nothing
    // is sent after the position until it is ready.
    expect(lost.socket.types()).toEqual(["control", "position"]);
    expect(positions(lost.socket)[0]).toEqual({ generation: "boot.1", mode: "reset", start: 1200, end: 1200, truncated: true });
    await waitFor(() => replayed(lost.socket), { timeout: 60_000, message: "made snapshot sent" });
    expect(lost.socket.types()).toEqual(["control", "position", "snapshot", "status"]);
    const snapshot = Buffer.from((lost.socket.frames[2] as { data: Uint8Array }).data).toString();
    expect(snapshot).toContain("yyyy");
  });

  it("a truncated reset made while output keeps coming sends that output after the snapshot, each byte once", async () => {
    const h = harness({ bufferBytes: 4096 });
    for (let i = 0; i < 400; i++) h.emit(`early line ${i}\r\n`);
    expect(h.all.length).toBeGreaterThan(4096);
    const c = h.join({ autoDrain: true });
    const end = positions(c.socket)[0]!.end;
    for (let i = 0; i < 20; i++) h.emit(`during line ${i}\r\n`);
    expect(c.socket.types()).toEqual(["control", "position"]);
    await waitFor(() => replayed(c.socket), { timeout: 60_000, message: "made snapshot sent" });
    expect(c.socket.types().slice(0, 4)).toEqual(["control", "position", "snapshot", "status"]);
    expect(c.socket.output().equals(h.all.subarray(end))).toBe(true);
    h.emit("after");
    expect(checkStream(c.socket, h.all)).toBe(h.all.length);
  });
});

describe("exactly once while output keeps flowing", () => {
  it("clients that join fresh, resume, lose their point in the ring or resync all see each byte once", async () => {
    const h = harness({ bufferBytes: 64 * 1024 });
    const clients: Client[] = [];
    const left: Array<{ at: number; resume: { generation: string; offset: number } }> = [];
    let dropped: Client | undefined;
    for (let i = 0; i < 300; i++) {
      // 1–3 KiB chunks at event-loop pace: some flush at once, some coalesce in a window.
      h.emit(`${String(i).padStart(4, "0")}:${"abcdefghij".repeat(100 + ((i * 37) % 200))}\r\n`);
      if (i === 10 || i === 150) clients.push(h.join());
      if (i === 5) {
        // joins before the ring wraps: its raw reset is sent at once, so its resume point keeps up
        dropped = h.join();
        clients.push(dropped);
      }
      if (i === 60) {
        // Its point is the ring's end when it leaves: how much a coalescing window holds back
        // depends on how many turns fit in 2 ms, and 10 more chunks must leave it in the ring.
        h.stream.flush();
        left.push({ at: i, resume: offsetOf(dropped!.socket) });
        dropped!.socket.dropped();
      }
      if (i === 70) clients.push(h.join({ resume: left[0]!.resume })); // append
      if (i === 200) clients.push(h.join({ resume: left[0]!.resume })); // long gone from the ring: truncated
      if (i === 220 || i === 240) clients[1]!.send(encodeResync());
      await turn();
    }
    h.stream.flush();
    await waitFor(() => clients.every((c) => !c.conn.isOpen || replayed(c.socket)), { timeout: 60_000, message: "every replay sent" });
    const all = h.all;
    expect(positions(clients[2]!.socket)[0]).toMatchObject({ mode: "append", start: left[0]!.resume.offset });
    expect(positions(clients[3]!.socket)[0]).toMatchObject({ mode: "reset", truncated: true });
    expect(positions(clients[4]!.socket)[0]).toMatchObject({ mode: "reset", truncated: true });
    expect(positions(clients[1]!.socket).length).toBeGreaterThanOrEqual(2);
    for (const [k, c] of clients.entries()) {
      const reached = checkStream(c.socket, all);
      if (c !== dropped) expect(reached, `client ${k} is at the ring's end`).toBe(all.length);
    }
    expect(h.stream.size).toBe(clients.length - 1);
  });

  it("output coalesced but not yet sent when a client attaches goes to the others first, and the replay covers it", () => {
    const h = harness();
    const a = h.join();
    // The clock stands still, so the second chunk comes within the coalescing window however busy
    // the machine: past COALESCE_AFTER_BYTES of burst it waits for the window.
    vi.spyOn(performance, "now").mockReturnValue(1_000_000);
    h.emit("b".repeat(64 * 1024));
    h.emit("pending");
    expect(h.stream.pendingOutputBytes).toBe("pending".length);
    const b = h.join();
    expect(h.stream.pendingOutputBytes).toBe(0);
    expect(a.socket.output().toString().endsWith("pending")).toBe(true);
    expect(Buffer.from((b.socket.frames[2] as { data: Uint8Array }).data).equals(h.all)).toBe(true);
    h.emit("next");
    h.stream.flush();
    expect(checkStream(a.socket, h.all)).toBe(h.all.length);
    expect(checkStream(b.socket, h.all)).toBe(h.all.length);
  });
});

describe("coalescing", () => {
  /** After a burst, does output that comes `afterMs` later still wait for the window, with these connections? */
  function stillCoalescing(afterMs: number, compressed: boolean[]): boolean {
    const h = harness();
    for (const c of compressed) h.join({ compressed: c });
    // The clock is set by the test, so how busy the machine is does not matter.
    const now = vi.spyOn(performance, "now").mockReturnValue(1_000_000);
    h.emit("b".repeat(64 * 1024));
    now.mockReturnValue(1_000_000 + afterMs);
    h.emit("late");
    return h.stream.pendingOutputBytes === "late".length;
  }
  const between = (COALESCE_WINDOW_MS + COMPRESSED_COALESCE_WINDOW_MS) / 2;

  it("holds a flood for the longer window while every connection compresses, the short one as soon as one does not", () => {
    expect(COALESCE_WINDOW_MS).toBeLessThan(between);
    expect(stillCoalescing(between, [true])).toBe(true);
    expect(stillCoalescing(between, [true, true])).toBe(true);
    expect(stillCoalescing(between, [false])).toBe(false);
    expect(stillCoalescing(between, [true, false])).toBe(false);
    expect(stillCoalescing(COMPRESSED_COALESCE_WINDOW_MS, [true])).toBe(false);
  });

  it("takes the longer window once the last plain connection left", () => {
    const h = harness();
    const plain = h.join();
    h.join({ compressed: true });
    const now = vi.spyOn(performance, "now").mockReturnValue(2_000_000);
    h.emit("b".repeat(64 * 1024));
    now.mockReturnValue(2_000_000 + between);
    h.emit("late");
    expect(h.stream.pendingOutputBytes).toBe(0);
    h.stream.detach(plain.conn);
    h.emit("c".repeat(64 * 1024));
    now.mockReturnValue(2_000_000 + 2 * between);
    h.emit("later");
    expect(h.stream.pendingOutputBytes).toBe("later".length);
  });
});

describe("back-pressure", () => {
  const flood = (n: number) => "z".repeat(n);

  it("pauses the PTY once the controller has more than the high water queued and resumes it under the low water", () => {
    const h = harness({ bufferBytes: 8 * 1024 * 1024 });
    const a = h.join({ autoDrain: false });
    let highest = 0;
    for (let i = 0; i < 6; i++) {
      h.emit(flood(FLUSH_BYTES)); // one full frame each: flushed at once
      highest = Math.max(highest, a.socket.bufferedAmount);
      expect(h.pty.paused, `queued ${a.socket.bufferedAmount}`).toBe(highest > PAUSE_HIGH_WATER_BYTES);
    }
    expect(h.pty.pauses).toBe(1);
    while (a.socket.unsentFrames > 0) {
      const before = a.socket.bufferedAmount;
      a.socket.drain(1);
      if (before >= PAUSE_LOW_WATER_BYTES) expect(h.pty.paused === false).toBe(a.socket.bufferedAmount < PAUSE_LOW_WATER_BYTES);
    }
    expect(h.pty.paused).toBe(false);
    expect(h.pty.resumes).toBe(1);
  });

  it("resumes the PTY when the lagging controller leaves or control moves to a connection that keeps up", async () => {
    const h = harness({ bufferBytes: 8 * 1024 * 1024 });
    const a = h.join({ autoDrain: false });
    const b = h.join();
    for (let i = 0; i < 5; i++) {
      h.emit(flood(FLUSH_BYTES));
      await turn(); // b's peer reads; a's does not
    }
    expect(h.pty.paused).toBe(true);
    expect(b.socket.bufferedAmount).toBe(0);
    b.send(encodeTakeControl());
    expect(h.pty.paused).toBe(false);
    // b now paces; a lagging observer never pauses the program.
    for (let i = 0; i < 5; i++) {
      h.emit(flood(FLUSH_BYTES));
      await turn(); // b's peer reads
    }
    expect(h.pty.pauses).toBe(1);
    a.send(encodeTakeControl());
    // a paces again: the next output finds it over the high water.
    h.emit("more");
    h.stream.flush(); // past a burst, small output waits for the coalescing window
    expect(h.pty.paused).toBe(true);
    a.socket.dropped();
    expect(h.pty.paused).toBe(false);
    expect(h.pty.resumes).toBe(2);
  });

  it("cuts an observer past the send-queue limit with 4408, never pausing the program for it, and it resumes with append", async () => {
    const h = harness({ bufferBytes: 16 * 1024 * 1024 });
    const controller = h.join({ clientId: "client-ctl" });
    const observer = h.join({ clientId: "client-obs", autoDrain: false });
    h.emit("before the flood\r\n");
    observer.socket.drain();
    const resume = offsetOf(observer.socket);
    expect(resume.offset).toBe(h.all.length);
    while (observer.conn.isOpen) {
      h.emit(flood(FLUSH_BYTES));
      if (observer.conn.isOpen) expect(observer.socket.bufferedAmount).toBeLessThanOrEqual(SEND_QUEUE_LIMIT_BYTES);
      await turn(); // the controller's peer reads
    }
    expect(observer.socket.closeCode).toBe(CloseCode.TOO_SLOW);
    expect(observer.socket.closeReason).toBe("too slow; reconnect and resume");
    expect(h.all.length - resume.offset).toBeGreaterThanOrEqual(SEND_QUEUE_LIMIT_BYTES);
    expect(h.pty.pauses).toBe(0);
    expect(h.stream.size).toBe(1);
    h.emit("after the cut");
    h.stream.flush(); // past a burst, small output waits for the coalescing window
    expect(checkStream(controller.socket, h.all)).toBe(h.all.length);
    const back = h.join({ clientId: "client-obs", resume });
    expect(back.socket.types()).toEqual(["control", "position", "output", "status"]);
    expect(positions(back.socket)[0]).toEqual({ generation: "boot.1", mode: "append", start: resume.offset, end: h.all.length, truncated: false });
    expect(back.socket.output().equals(h.all.subarray(resume.offset))).toBe(true);
  });

  it("cuts a connection whose queued bytes made no progress for the drain timeout", async () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval", "Date"] });
    const h = harness();
    const stuck = h.join({ autoDrain: false });
    const reading = h.join();
    h.emit("unread");
    await turn(); // `reading`'s peer reads
    vi.advanceTimersByTime(WRITE_DRAIN_TIMEOUT_MS - SLOW_CHECK_INTERVAL_MS);
    expect(stuck.socket.closeCode).toBeNull();
    expect(stuck.conn.isTooSlow(Date.now())).toBe(false);
    vi.advanceTimersByTime(2 * SLOW_CHECK_INTERVAL_MS);
    expect(stuck.socket.closeCode).toBe(CloseCode.TOO_SLOW);
    expect(reading.socket.closeCode).toBeNull();
    expect(reading.conn.isOpen).toBe(true);
  });

  it("a connection with nothing queued is never too slow, however long it was idle", () => {
    const socket = new RecordingSocket(false);
    const conn = new TerminalConnection(socket, "client-x", "x", true, { onDrain: () => {}, onGone: () => {} });
    conn.send(encodeInput("x"));
    const later = conn.lastProgressAt + WRITE_DRAIN_TIMEOUT_MS + 1;
    expect(conn.isTooSlow(later)).toBe(true);
    socket.drain();
    expect(conn.isTooSlow(later)).toBe(false);
    expect(conn.isTooSlow(conn.lastProgressAt + 100 * WRITE_DRAIN_TIMEOUT_MS)).toBe(false);
  });
});

describe("control", () => {
  const controllerOf = (socket: RecordingSocket) => {
    const control = socket.frames.findLast((f) => f.type === "control") as Extract<ServerMessage, { type: "control" }>;
    return control.control.controller?.clientId ?? null;
  };

  it("the first client takes the seat; input hands it over and every connection hears it once", () => {
    const h = harness();
    const a = h.join({ clientId: "client-a" });
    const b = h.join({ clientId: "client-b" });
    expect(controllerOf(b.socket)).toBe("client-a");
    expect(a.socket.types()).toEqual(["control", "position", "snapshot", "status"]);
    b.send(encodeInput("ls\r"));
    expect(h.pty.writes).toEqual(["ls\r"]);
    expect(a.socket.types().slice(4)).toEqual(["control"]);
    expect(controllerOf(a.socket)).toBe("client-b");
    expect(controllerOf(b.socket)).toBe("client-b");
    expect(h.session.info().controller?.clientId).toBe("client-b");
    // The controller resizes; the grid everyone sees changes.
    b.send(encodeResize({ cols: 100, rows: 30 }));
    expect(h.pty.sizes.at(-1)).toEqual([100, 30]);
    const expected = encodeControl({ controller: h.session.info().controller, cols: 100, rows: 30, colorSchemeReports: false });
    expect(a.socket.sent.at(-1)).toEqual(expected);
    expect(b.socket.sent.at(-1)).toEqual(expected);
    // A connection that is not the controller's cannot resize.
    a.send(encodeResize({ cols: 60, rows: 20 }));
    expect(h.session.cols).toBe(100);
    // The controller's last connection leaves: the seat empties, and that is announced.
    b.socket.dropped();
    expect(controllerOf(a.socket)).toBeNull();
    expect(h.session.info()).toMatchObject({ controller: null, clients: 1 });
  });

  it("a read-only observer cannot write, resize, submit, take control or change what others see", () => {
    const h = harness();
    const a = h.join({ clientId: "client-a" });
    const o = h.join({ clientId: "client-o", canControl: false });
    const seen = a.socket.sent.length;
    const observerSeen = o.socket.sent.length;
    o.send(encodeInput("rm -rf /\r"));
    o.send(encodeAutoReply("\x1b[1;1R"));
    o.send(encodeTakeControl());
    o.send(encodeResize({ cols: 40, rows: 10 }));
    o.send(encodeSubmit({ id: "submission-1", generation: "boot.1" }, "echo hi\r", "\r"));
    o.send(new Uint8Array([0x03, 0xff])); // a broken submit frame
    expect(h.pty.writes).toEqual([]);
    expect(h.pty.sizes).toEqual([]);
    expect([h.session.cols, h.session.rows]).toEqual([80, 24]);
    expect(a.socket.sent.length).toBe(seen);
    expect(o.socket.sent.length).toBe(observerSeen);
    expect(h.session.info().controller?.clientId).toBe("client-a");
    // Its own resync replays to it alone.
    o.send(encodeResync());
    expect(o.socket.types().slice(-4)).toEqual(["control", "position", "snapshot", "status"]);
    expect(a.socket.sent.length).toBe(seen);
  });

  it("a read-only observer attaching to an empty seat does not take it", () => {
    const h = harness();
    const o = h.join({ clientId: "client-o", canControl: false });
    expect(controllerOf(o.socket)).toBeNull();
    const a = h.join({ clientId: "client-a" });
    expect(controllerOf(a.socket)).toBe("client-a");
    expect(controllerOf(o.socket)).toBe("client-a");
  });
});

describe("exit", () => {
  it("every connection gets its last output, status, exit, then 4410", async () => {
    const h = harness();
    const a = h.join();
    const b = h.join();
    h.emit("bye\r\n");
    h.pty.exit(3);
    await waitFor(() => a.socket.closeCode !== null && b.socket.closeCode !== null, { timeout: 60_000, message: "closed" });
    for (const c of [a, b]) {
      expect(c.socket.types().slice(-3)).toEqual(["output", "status", "exit"]);
      expect(c.socket.frames.at(-1)).toEqual({ type: "exit", exitCode: 3 });
      expect(c.socket.closeCode).toBe(CloseCode.EXITED);
    }
  });
});
