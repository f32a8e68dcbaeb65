import { afterEach, describe, expect, it } from "vitest";
import { spawnPty } from "../pty/index.ts";
import { FakePty, fakePtys } from "../testing/fake-pty.ts";
import { waitFor } from "../testing/wait.ts";
import { SessionRegistry } from "./registry.ts";
import { HeadlessScreen } from "./headless-screen.ts";
import { LENT_PIECE_BYTES, OUTPUT_CHUNK_LIFETIME_BYTES, Session } from "./session.ts";

const BASH = ["bash", "--norc", "--noprofile"];
let registry: SessionRegistry;

function makeRegistry(bufferBytes = 4 * 1024 * 1024) {
  registry = new SessionRegistry({ shell: "/bin/bash", bufferBytes, spawnPty });
  return registry;
}

afterEach(async () => {
  await registry?.closeAll();
});

const ringText = (s: Session) => Buffer.from(s.readOutput()).toString("utf8");

async function exited(s: Session): Promise<number> {
  if (s.status === "exited") return s.exitCode!;
  return new Promise((resolve) => s.events.on("exit", resolve));
}

describe("Session on a real bash", () => {
  it("sees a resize through stty size", async () => {
    const s = makeRegistry().create({ command: [...BASH, "-i"], cwd: "/tmp" });
    s.write("PS1='$ '\r");
    s.resize(132, 43);
    s.write("stty size\r");
    await waitFor(() => ringText(s).includes("43 132"), { message: "stty size after resize" });
    expect(s.info().cols).toBe(132);
    expect(s.info().rows).toBe(43);
  });

  it("reports the exit code of sh -c 'exit 5'", async () => {
    const s = makeRegistry().create({ command: ["sh", "-c", "exit 5"] });
    expect(await exited(s)).toBe(5);
    expect(s.info().status).toBe("exited");
    expect(s.info().exitCode).toBe(5);
  });

  it("restart begins a new generation with offsets from 0", async () => {
    const s = makeRegistry().create({ command: [...BASH, "-c", "echo run-$$"] });
    const firstPid = s.pid;
    await exited(s);
    const before = s.generation;
    expect(ringText(s)).toContain(`run-${firstPid}`);
    await s.restart();
    const secondPid = s.pid;
    expect(secondPid).not.toBe(firstPid);
    expect(s.generation).not.toBe(before);
    expect(s.generation.split(".")[0]).toBe(registry.bootId);
    await exited(s);
    // The ring holds the new run alone, counted from 0: exactly its one line.
    expect(ringText(s)).toBe(`run-${secondPid}\r\n`);
    expect([s.stats().start, s.stats().end]).toEqual([0, Buffer.byteLength(`run-${secondPid}\r\n`)]);
  });

  it("never repeats a generation, within a run or across server runs", async () => {
    const first = makeRegistry();
    const second = new SessionRegistry({ shell: "/bin/bash", bufferBytes: 1024 * 1024, spawnPty });
    try {
      const a = first.create({ command: ["true"] });
      const b = second.create({ command: ["true"] });
      expect(first.bootId).not.toBe(second.bootId);
      expect(a.generation).not.toBe(b.generation); // both are the first run of a fresh server
      const seen = new Set([a.generation]);
      for (let i = 0; i < 3; i++) {
        await exited(a);
        await a.restart();
        expect(seen.has(a.generation)).toBe(false);
        seen.add(a.generation);
      }
      await exited(a);
    } finally {
      await second.closeAll();
    }
  });

  it("keeps an exited session's buffer and exit code until it is restarted", async () => {
    const s = makeRegistry().create({ command: ["sh", "-c", "echo last-words; exit 3"] });
    await exited(s);
    expect(s.info()).toMatchObject({ status: "exited", exitCode: 3, pid: null });
    expect(ringText(s)).toContain("last-words");
    expect(registry.get(s.id)).toBe(s);
  });

  it.each([
    ["a ring large enough hands on views of itself", 1024 * 1024, true],
    ["a ring too small for that hands on copies", 256 * 1024, false],
  ])("output chunks stay as they were for OUTPUT_CHUNK_LIFETIME_BYTES of later output: %s", async (_, capacity, views) => {
    const s = makeRegistry(capacity).create({ command: ["seq", "1", "400000"] });
    const held: { chunk: Uint8Array; copy: Buffer; until: number }[] = [];
    let appended = 0;
    let checked = 0;
    let ringMemory = 0;
    s.events.on("output", (chunk) => {
      appended += chunk.length;
      if (chunk.buffer.byteLength === capacity) ringMemory++;
      while (held.length > 0 && held[0]!.until < appended) held.shift();
      for (const h of held) {
        if (!Buffer.from(h.chunk).equals(h.copy)) throw new Error(`a chunk changed ${appended - h.until + OUTPUT_CHUNK_LIFETIME_BYTES} bytes later`);
        checked++;
      }
      held.push({ chunk, copy: Buffer.from(chunk), until: appended + OUTPUT_CHUNK_LIFETIME_BYTES });
    });
    await exited(s);
    expect(s.stats().truncated).toBe(true); // the ring wrapped: views were written over later
    expect(checked).toBeGreaterThan(100);
    if (views) expect(ringMemory).toBeGreaterThan(0);
    else expect(ringMemory).toBe(0);
  });

  it("keeps the tail of 500 000 lines intact in a ring that wrapped many times", async () => {
    const capacity = 256 * 1024;
    const s = makeRegistry(capacity).create({ command: ["seq", "1", "500000"] });
    await exited(s);
    expect(s.stats().truncated).toBe(true);
    expect(s.stats().end - s.stats().start).toBe(capacity);
    const lines = ringText(s).replace(/\r\n/g, "\n").split("\n");
    lines.shift(); // the first retained line may be cut
    while (lines.at(-1) === "") lines.pop();
    expect(lines.at(-1)).toBe("500000");
    const first = Number(lines[0]);
    lines.forEach((line, i) => {
      if (line !== String(first + i)) throw new Error(`line ${i} is "${line}", expected ${first + i}`);
    });
    // the offset counts every byte the program wrote: "1\r\n" … "500000\r\n"
    let total = 0;
    for (let n = 1; n <= 500000; n++) total += String(n).length + 2;
    expect(s.stats().end).toBe(total);
  });

  it("keeps UTF-8 characters split across PTY reads intact in the headless screen", async () => {
    // The program writes the bytes of "世界" split in the middle of the first character, pausing
    // so the PTY delivers them in separate reads.
    const s = makeRegistry().create({
      command: [...BASH, "-c", "printf '\\xe4'; sleep 0.2; printf '\\xb8\\x96\\xe7'; sleep 0.2; printf '\\x95\\x8c ok\\n'; sleep 100"],
    });
    await waitFor(() => ringText(s).includes("ok"));
    const screen = await s.readScreen();
    expect(screen.lines.join("\n")).toContain("世界 ok");
  });

  it("tracks the modes a snapshot must restore", async () => {
    const s = makeRegistry().create({ command: [...BASH, "-c", "printf '\\e[?1049h\\e[?2004h\\e[?1000h\\e[?1006h'; echo ready; sleep 100"] });
    await waitFor(() => ringText(s).includes("ready"));
    expect(s.modes.alternateScreen).toBe(true);
    expect(s.modes.bracketedPaste).toBe(true);
    const restore = s.modes.restoreSequence();
    for (const seq of ["\x1b[?1049h", "\x1b[?2004h", "\x1b[?1000h", "\x1b[?1006h"]) expect(restore).toContain(seq);
  });

  it("takes the title from OSC 0/2 unless the user set one, and the cwd from OSC 7", async () => {
    const s = makeRegistry().create({ command: [...BASH, "-c", "printf '\\e]2;building\\a\\e]7;file://host/srv/my%%20dir\\a'; echo done; sleep 100"] });
    await waitFor(() => s.info().title === "building");
    expect(s.info().cwd).toBe("/srv/my dir");
    s.setTitle("mine");
    expect(s.info().title).toBe("mine");
  });

  it("sets attention on BEL and keeps a preview of the last screen lines", async () => {
    const s = makeRegistry().create({ command: [...BASH, "-c", "echo one; echo; echo two; echo three; printf '\\a'; sleep 100"] });
    await waitFor(() => s.info().attention);
    const preview = await waitFor(() => (s.info().preview.length === 3 ? s.info().preview : null));
    expect(preview).toEqual(["one", "two", "three"]);
    s.clearAttention();
    expect(s.info().attention).toBe(false);
  });
});

describe("Session's face: connections and retained output", () => {
  function fakeSession(bufferBytes = 1024) {
    const ptys = fakePtys();
    const s = new Session({ id: "face0001", command: ["prog"], cwd: "/", env: {}, cols: 80, rows: 24, bufferBytes, spawnPty: ptys.spawn, nextGeneration: () => "boot.1" });
    s.start();
    disposeAfter.push(s);
    return { s, pty: ptys.last };
  }
  const disposeAfter: Session[] = [];
  afterEach(async () => {
    for (const s of disposeAfter.splice(0)) await s.dispose();
  });
  const conn = (id: number, clientId: string, canControl = true) => ({ id, clientId, label: clientId, canControl });

  it("counts terminal and chat connections together and reports the seat the links changed", () => {
    const { s } = fakeSession();
    let changes = 0;
    s.events.on("changed", () => changes++);
    const terminal = s.connect(conn(1, "client-a"));
    expect(terminal.effect).toEqual({ broadcast: true, solo: null });
    const chat = s.connect(conn(2, "client-b"));
    const observer = s.connect(conn(3, "client-o", false));
    expect(s.info()).toMatchObject({ clients: 3, controller: { clientId: "client-a" } });
    expect(observer.claim()).toBeNull();
    expect(chat.claim()).toEqual({ broadcast: true, solo: null });
    expect(s.info().controller?.clientId).toBe("client-b");
    expect(changes).toBe(4); // three arrivals and one change of seat
    expect(chat.leave()).toEqual({ broadcast: true, solo: null });
    expect(chat.leave()).toEqual({ broadcast: false, solo: null }); // twice changes nothing
    expect(chat.claim()).toBeNull();
    expect(s.info()).toMatchObject({ clients: 2, controller: null });
    terminal.leave();
    observer.leave();
    expect(s.clients).toBe(0);
  });

  it("where the session host serves the streams, the list shows its seat and grid, and the PTY is not resized again", () => {
    const { s, pty } = fakeSession();
    let changes = 0;
    s.events.on("changed", () => changes++);
    s.setRemoteSeat({ controller: { clientId: "tab-1", label: "phone", since: 5 }, clients: 2 });
    expect(s.info()).toMatchObject({ clients: 2, controller: { clientId: "tab-1", label: "phone" } });
    s.followResize(100, 30);
    expect(s.info()).toMatchObject({ cols: 100, rows: 30 });
    expect(pty.sizes).toEqual([]);
    // A connection of this process (a chat end) holds the seat here: its lease speaks, the counts add up.
    const local = s.connect(conn(1, "chat-1"));
    expect(s.info()).toMatchObject({ clients: 3, controller: { clientId: "chat-1" } });
    local.leave();
    s.setRemoteSeat({ controller: null, clients: 0 });
    expect(s.info()).toMatchObject({ clients: 0, controller: null });
    expect(changes).toBe(5);
  });

  it("reads retained output by absolute offset, clamped to what the ring still has", () => {
    const { s, pty } = fakeSession(16);
    pty.emit("0123456789");
    expect(Buffer.from(s.readOutput(3, 6)).toString()).toBe("345");
    pty.emit("abcdefghij");
    expect(s.stats()).toMatchObject({ start: 4, end: 20, truncated: true });
    expect(Buffer.from(s.readOutput()).toString()).toBe("456789abcdefghij");
    expect(Buffer.from(s.readOutput(0, 6)).toString()).toBe("45");
    expect(s.readOutput(30).length).toBe(0);
  });
});

describe("Session's mirror after a skimmed flood", () => {
  it("comes back from the ring whole: read's scrollback holds the flood from its first line, also what was parsed before the skim", async () => {
    const ptys = fakePtys();
    // A parse burst of 256 KiB, refilled too slowly to matter: the flood below is skimmed.
    const session = new Session({
      id: "s1",
      command: ["flood"],
      cwd: "/",
      env: {},
      cols: 80,
      rows: 24,
      bufferBytes: 4 * 1024 * 1024,
      spawnPty: ptys.spawn,
      nextGeneration: () => "boot.1",
      makeScreen: (options) => new HeadlessScreen({ ...options, parseBudget: { bytesPerSec: 1024, burstBytes: 256 * 1024 } }),
    });
    try {
      session.start();
      const line = (n: number) => `flood ${String(n).padStart(6, "0")} ${"z".repeat(30)}`;
      const lines = 9_000; // ~400 KiB: past the burst, well inside the ring and the skim tail
      for (let n = 1; n <= lines; n += 100) {
        let batch = "";
        for (let i = n; i < n + 100; i++) batch += `${line(i)}\r\n`;
        ptys.last.emit(batch);
      }
      expect(session.stats().screen.skimming).toBe(true);
      const read = await session.readScreen({ scrollback: 10_000 });
      const text = [...read.scrollback, ...read.lines].filter((l) => l !== "");
      expect(text[0]).toBe(line(1));
      expect(text.at(-1)).toBe(line(lines));
      expect(text).toHaveLength(lines);
    } finally {
      session.dispose();
    }
  });
});

describe("Session: lent reads", () => {
  /** A PTY that lends its reads (PtyProcess.onLentData), as node-pty's and the session host's do. */
  class LendingPty extends FakePty {
    onLentData(listener: (chunk: Uint8Array) => void): void {
      this.onData(listener);
    }
  }

  it("takes a lent batch larger than a read in read-sized pieces, each in the ring before it is handed on", async () => {
    let pty!: LendingPty;
    const s = new Session({
      id: "face0002",
      command: ["prog"],
      cwd: "/",
      env: {},
      cols: 80,
      rows: 24,
      bufferBytes: 4 * 1024 * 1024,
      spawnPty: (options) => (pty = new LendingPty(options)),
      nextGeneration: () => "boot.1",
    });
    s.start();
    const pieces: Buffer[] = [];
    s.events.on("output", (chunk) => pieces.push(Buffer.from(chunk)));
    const batch = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 7) & 0xff));
    const lent = Buffer.from(batch);
    pty.emit(lent);
    lent.fill(0); // the lender reuses its buffer
    expect(pieces.map((p) => p.length)).toEqual([65536, 65536, 65536, 65536, 37856]);
    expect(pieces.every((p) => p.length <= LENT_PIECE_BYTES)).toBe(true);
    expect(Buffer.concat(pieces).equals(batch)).toBe(true);
    expect(Buffer.from(s.readOutput()).equals(batch)).toBe(true);
    await s.dispose();
  });
});
