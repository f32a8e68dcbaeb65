import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { encodeSubmit } from "../contract/frames.ts";
import { TerminalClient } from "../testing/terminal-client.ts";
import { startTestServer, TEST_SHELL_COMMAND, type TestServer } from "../testing/test-server.ts";
import { waitFor } from "../testing/wait.ts";

/** 10 MB of seq through the server: seconds when idle, past a minute beside other test runs on two cores. */
const FLOOD_MS = 180_000;

let server: TestServer;
/** A program that prints every byte it reads as [decimal], in raw mode without echo. */
let reader: string;
beforeAll(async () => {
  server = await startTestServer({ bufferBytes: 64 * 1024, openApi: true });
  reader = join(server.dataDir, "reader.mjs");
  writeFileSync(
    reader,
    `#!${process.execPath}
process.stdin.setRawMode(true);
if (process.argv[2] === "paste") process.stdout.write("\\x1b[?2004h");
process.stdout.write("READY\\n");
process.stdin.on("data", (d) => process.stdout.write([...d].map((b) => "[" + b + "]").join("")));
`,
  );
  chmodSync(reader, 0o755);
});
afterAll(async () => {
  await server?.stop();
});

const connect = (id: string, client: string, options: ConstructorParameters<typeof TerminalClient>[2] = {}) =>
  TerminalClient.connect(server.url, id, { token: server.token, client, label: `${client} device`, ...options });
const attached = (c: TerminalClient) => c.waitForFrames((f) => f.some((x) => x.type === "status"));
const roundTrip = (c: TerminalClient) => c.roundTrip();
const bytesOf = (text: string) => [...Buffer.from(text)].map((b) => `[${b === 10 ? 10 : b}]`).join("");

async function readerSession(mode = "") {
  const s = await server.createSession({ command: mode ? [reader, mode] : [reader] });
  return s;
}

describe("controller and observers", () => {
  it("seats the first client; an observer's resize and auto-replies are ignored until its input takes control", async () => {
    const s = await readerSession();
    const a = await connect(s.id, "client-a");
    await a.waitForText("READY");
    expect(a.control?.controller).toMatchObject({ clientId: "client-a", label: "client-a device" });
    const b = await connect(s.id, "client-b");
    await attached(b);
    expect(b.control?.controller?.clientId).toBe("client-a");
    b.resize(120, 40);
    b.autoReply("\x1b[1;1R");
    a.type("x");
    await a.waitForText("[120]");
    expect(a.text).not.toContain("[27]"); // the observer's auto-reply never reached the program
    expect(server.registry.get(s.id)!.cols).toBe(80);
    // the observer types: it takes control, everyone hears of it
    b.type("y");
    await a.waitForText("[121]");
    await waitFor(() => a.control?.controller?.clientId === "client-b" && b.control?.controller?.clientId === "client-b");
    b.resize(120, 40);
    await waitFor(() => a.control?.cols === 120 && a.control?.rows === 40);
    // now the old controller's auto-reply is the one ignored, the new one's goes through without taking control
    a.autoReply("\x1b[5;5R");
    b.autoReply("\x1b[9;9R");
    await a.waitForText(bytesOf("\x1b[9;9R"));
    expect(a.text).not.toContain(bytesOf("\x1b[5;5R"));
    expect(a.control?.controller?.clientId).toBe("client-b");
    await a.close();
    await b.close();
  });

  it("makes the newest connection of one client effective and hands over to the other with a solo 0x06", async () => {
    const s = await server.createSession({ command: [...TEST_SHELL_COMMAND, "-i"], env: { PS1: "$ " } });
    const first = await connect(s.id, "twin-tabs");
    await first.waitForText("$ ");
    const second = await connect(s.id, "twin-tabs");
    await attached(second);
    first.resize(90, 20); // not effective any more: ignored
    second.resize(100, 25);
    await waitFor(() => first.control?.cols === 100);
    expect(server.registry.get(s.id)!.cols).toBe(100);
    const controlsBefore = first.types().filter((t) => t === "control").length;
    const observer = await connect(s.id, "other-client");
    await attached(observer);
    const observerControls = observer.types().filter((t) => t === "control").length;
    await second.close();
    // first is effective again: it alone gets a 0x06, so it re-sends its size
    await waitFor(() => first.types().filter((t) => t === "control").length === controlsBefore + 1);
    expect(observer.types().filter((t) => t === "control").length).toBe(observerControls);
    first.resize(91, 21);
    await waitFor(() => server.registry.get(s.id)!.cols === 91);
    expect(first.control?.controller?.clientId).toBe("twin-tabs");
    await first.close();
    await observer.close();
  });

  it("makes a sibling connection that types effective with a 0x06 to it alone, and only its resize counts then", async () => {
    const s = await readerSession();
    const first = await connect(s.id, "typing-twin");
    await first.waitForText("READY");
    const second = await connect(s.id, "typing-twin");
    await attached(second);
    const observer = await connect(s.id, "twin-watcher");
    await attached(observer);
    const controls = (c: TerminalClient) => c.types().filter((t) => t === "control").length;
    const [firstBefore, secondBefore, observerBefore] = [first, second, observer].map(controls);
    first.type("a"); // the older tab types: it becomes its client's effective connection
    await waitFor(() => controls(first) === firstBefore + 1, { message: "solo 0x06 to the typing tab" });
    await first.waitForText("[97]");
    await Promise.all([second, observer].map(roundTrip));
    expect([controls(second), controls(observer)]).toEqual([secondBefore, observerBefore]);
    expect(first.control?.controller?.clientId).toBe("typing-twin");
    second.resize(90, 20); // no longer effective: ignored
    await roundTrip(second);
    first.resize(101, 30);
    await waitFor(() => observer.control?.cols === 101 && observer.control.rows === 30, { message: "resize broadcast" });
    expect(server.registry.get(s.id)!.cols).toBe(101);
    await Promise.all([first.close(), second.close(), observer.close()]);
  });

  it("with no controller writes only the earliest attached connection's auto-replies, and they take no control", async () => {
    const s = await readerSession();
    const leaving = await connect(s.id, "ar-leaving");
    await leaving.waitForText("READY");
    const early = await connect(s.id, "ar-earliest");
    await attached(early);
    const late = await connect(s.id, "ar-latest");
    await attached(late);
    await leaving.close();
    await waitFor(() => early.control?.controller === null && late.control?.controller === null, { message: "seat empty" });
    late.autoReply("\x1b[7;7R");
    await roundTrip(late);
    early.autoReply("\x1b[8;8R");
    await early.waitForText(bytesOf("\x1b[8;8R"));
    expect(early.text).not.toContain(bytesOf("\x1b[7;7R"));
    expect(server.registry.get(s.id)!.lease.info).toBeNull();
    expect(early.control?.controller).toBeNull();
    await Promise.all([early.close(), late.close()]);
  });

  it("never seats a terminal:read credential: its take-control, resize, auto-replies and submissions are refused", async () => {
    const made = await server.api("/api/tokens", { method: "POST", json: { name: "observer only", capabilities: ["terminal:read"] } });
    expect(made.status).toBe(201);
    const { token } = (await made.json()) as { token: string };
    const s = await readerSession();
    const watcher = await TerminalClient.connect(server.url, s.id, { token, client: "read-only-tab", label: "watcher" });
    await watcher.waitForText("READY");
    expect(watcher.control?.controller).toBeNull(); // first to attach, but may not control
    watcher.takeControl();
    watcher.resize(120, 40);
    watcher.autoReply("\x1b[3;3R"); // the earliest connection, yet not one that may write
    watcher.submit("ro-submission-1", "never", "\r");
    watcher.type("n");
    await roundTrip(watcher);
    const session = server.registry.get(s.id)!;
    expect(session.lease.info).toBeNull();
    expect([session.cols, session.rows]).toEqual([80, 24]);
    expect(session.submissions.get("ro-submission-1")).toBeUndefined();
    expect(watcher.submitStatuses).toEqual([]);
    const writer = await connect(s.id, "writer-tab");
    await attached(writer);
    expect(writer.control?.controller?.clientId).toBe("writer-tab");
    writer.type("!");
    await watcher.waitForText("[33]");
    expect(watcher.text).not.toMatch(/\[27\]|\[110\]/); // no ESC of the reply, no "n"
    await Promise.all([watcher.close(), writer.close()]);
  });

  it("never hands the seat to a read-only connection that copied the controller's client ID: it cannot resize or pace the PTY", async () => {
    const made = await server.api("/api/tokens", { method: "POST", json: { name: "copycat", capabilities: ["terminal:read"] } });
    const { token } = (await made.json()) as { token: string };
    const go = join(server.dataDir, `go-${Date.now()}`);
    const s = await server.createSession({ command: [...TEST_SHELL_COMMAND, "-i"], env: { PS1: "$ " } });
    const session = server.registry.get(s.id)!;
    const owner = await connect(s.id, "seat-owner");
    await owner.waitForText("$ ");
    // The flood starts once the test says so, with the owner gone.
    owner.type(`while [ ! -e ${go} ]; do sleep 0.05; done; seq 1 1500000; echo FLOOD-$((6*7))\r`);
    const copied = owner.control!.controller!.clientId;
    const copycat = await TerminalClient.connect(server.url, s.id, { token, client: copied, label: "copycat" });
    const bystander = await TerminalClient.connect(server.url, s.id, { token, client: "bystander", label: "bystander" });
    await Promise.all([attached(copycat), attached(bystander)]);
    await owner.close();
    await waitFor(() => bystander.control !== null && bystander.control.controller === null, { message: "the seat emptied" });
    expect(copycat.control?.controller).toBeNull();
    copycat.resize(120, 40);
    await roundTrip(copycat);
    expect([session.cols, session.rows]).toEqual([80, 24]);
    // The copycat stops reading during a flood: nobody else waits for it.
    const pauses = vi.spyOn(session, "pauseOutput");
    (copycat.ws as unknown as { _socket: Socket })._socket.pause();
    writeFileSync(go, "");
    await bystander.waitForText("FLOOD-42", FLOOD_MS).catch((e) => {
      throw new Error(`${e.message}; bystander ${bystander.closeCode} offset ${bystander.offset}, copycat ${copycat.closeCode}, status ${session.status} ring ${session.stats().end} tail ${JSON.stringify(bystander.text.slice(-200))}`);
    });
    expect(pauses).not.toHaveBeenCalled();
    pauses.mockRestore();
    (copycat.ws as unknown as { _socket: Socket })._socket.resume();
    await Promise.all([copycat.close(), bystander.close()]);
  }, FLOOD_MS + 60_000);

  it("treats another principal that copied the controller's client ID as a client of its own", async () => {
    const made = await server.api("/api/tokens", { method: "POST", json: { name: "other writer", capabilities: ["terminal:read", "terminal:write"] } });
    const { token } = (await made.json()) as { token: string };
    const s = await readerSession();
    const session = server.registry.get(s.id)!;
    const owner = await connect(s.id, "owned-tab");
    await owner.waitForText("READY");
    const other = await TerminalClient.connect(server.url, s.id, { token, client: "owned-tab", label: "other" });
    await attached(other);
    // Not the owner's newest connection: an observer, whose resize is ignored while the owner's counts.
    other.resize(120, 40);
    await roundTrip(other);
    expect([session.cols, session.rows]).toEqual([80, 24]);
    owner.resize(100, 30);
    await waitFor(() => session.cols === 100, { message: "the owner's resize applied" });
    // Its submissions are its own: the owner hears nothing of them.
    other.submit("other-sub-0001", "x", "");
    await other.waitForFrames((f) => f.some((x) => x.type === "submitStatus" && x.status.state === "written"));
    expect(other.control?.controller?.clientId).not.toBe("owned-tab");
    await roundTrip(owner);
    expect(owner.submitStatuses).toEqual([]);
    await Promise.all([owner.close(), other.close()]);
  });

  it("leaves the seat empty when the controller's last connection goes", async () => {
    const s = await readerSession();
    const a = await connect(s.id, "leaving-ctl");
    await a.waitForText("READY");
    const b = await connect(s.id, "staying-obs");
    await attached(b);
    await a.close();
    await waitFor(() => b.control !== null && b.control.controller === null, { message: "control broadcast with no controller" });
    expect(server.registry.get(s.id)!.info().controller).toBeNull();
    b.resize(120, 40); // still an observer
    b.type("z"); // input takes the empty seat
    await waitFor(() => b.control?.controller?.clientId === "staying-obs");
    await b.close();
  });

  it("never leaves the PTY at the loser's size when two clients fight over it", async () => {
    const s = await server.createSession({ command: [...TEST_SHELL_COMMAND, "-i"], env: { PS1: "$ " } });
    const a = await connect(s.id, "fighter-a");
    await a.waitForText("$ ");
    const b = await connect(s.id, "fighter-b");
    await attached(b);
    const sizes = { "fighter-a": [100, 30], "fighter-b": [120, 40] } as const;
    for (let round = 0; round < 20; round++) {
      a.takeControl();
      a.resize(...sizes["fighter-a"]);
      b.takeControl();
      b.resize(...sizes["fighter-b"]);
      if (round % 2) {
        a.takeControl();
        a.resize(...sizes["fighter-a"]);
      }
    }
    const session = server.registry.get(s.id)!;
    // Once the server handled both sockets' frames (a ping round trip on each), the size is the controller's.
    await Promise.all([a.roundTrip(), b.roundTrip()]);
    const controller = session.lease.info!.clientId as keyof typeof sizes;
    const [cols, rows] = sizes[controller];
    expect([session.cols, session.rows]).toEqual([cols, rows]);
    const who = controller === "fighter-a" ? a : b;
    who.type("stty size\r");
    await who.waitForText(`${rows} ${cols}`);
    await a.close();
    await b.close();
  });
});

describe("submissions", () => {
  it("writes a submission once even when sent 5 times and from two connections", async () => {
    const s = await readerSession();
    const one = await connect(s.id, "drafting-client");
    await one.waitForText("READY");
    const two = await connect(s.id, "drafting-client");
    await attached(two);
    const silent = await connect(s.id, "drafting-client"); // sends nothing, hears every status
    await attached(silent);
    for (let i = 0; i < 5; i++) one.submit("sub-once-0001", "hi", "\r");
    two.submit("sub-once-0001", "hi", "\r");
    await one.waitForText(bytesOf("hi\r"));
    await waitFor(() => one.submitStatuses.length >= 6 && two.submitStatuses.length >= 2);
    // after everything settled, the bytes appear exactly once
    one.type("!");
    await one.waitForText("[33]");
    expect(one.text.split(bytesOf("hi\r")).length - 1).toBe(1);
    // The first answer is `received`; repeats answer with the state recorded when they arrived; it ends `written`.
    expect(one.submitStatuses[0]).toEqual({ id: "sub-once-0001", state: "received" });
    await waitFor(() => one.submitStatuses.at(-1)?.state === "written" && two.submitStatuses.at(-1)?.state === "written");
    expect(new Set([...one.submitStatuses, ...two.submitStatuses].map((x) => x.state))).toEqual(new Set(["received", "written"]));
    await waitFor(() => silent.submitStatuses.at(-1)?.state === "written", { message: "the silent tab hears the final state" });
    expect(silent.submitStatuses[0]).toEqual({ id: "sub-once-0001", state: "received" });
    await Promise.all([one.close(), two.close(), silent.close()]);
  });

  it("fails a wrong generation, an invalid header and an oversize body without writing; a gone PTY fails with write", async () => {
    const s = await readerSession();
    const c = await connect(s.id, "failing-client");
    await c.waitForText("READY");
    c.submit("sub-wrong-gen1", "never", "\r", "someother.7");
    c.send(Buffer.concat([Buffer.from([0x03]), Buffer.from('{"id":"sub-bad-head1","generation":42,"bodyBytes":1}\nx')]));
    c.send(Buffer.concat([Buffer.from([0x03]), Buffer.from(`{"id":"sub-too-big1","generation":"${c.generation}","bodyBytes":300000}\n`), Buffer.alloc(300000, 0x61)]));
    await waitFor(() => c.submitStatuses.length >= 3);
    expect(c.submitStatuses).toEqual([
      { id: "sub-wrong-gen1", state: "failed", error: "generation" },
      { id: "sub-bad-head1", state: "failed", error: "invalid" },
      { id: "sub-too-big1", state: "failed", error: "invalid" },
    ]);
    c.type("!");
    await c.waitForText("[33]");
    expect(c.text).not.toContain("[110][101][118]"); // "nev"
    expect(c.text).not.toContain("[97][97]");
    // the same IDs answer with their recorded state, not a second attempt
    c.query(["sub-wrong-gen1", "sub-never-sent"]);
    await waitFor(() => c.submitStatuses.length >= 5);
    expect(c.submitStatuses.slice(3)).toEqual([
      { id: "sub-wrong-gen1", state: "failed", error: "generation" },
      { id: "sub-never-sent", state: "missing" },
    ]);
    await c.close();

    // PTY gone: the program exits but the connection is still open for a moment — submit straight into the log
    const dead = await server.createSession({ command: ["sh", "-c", "exit 0"] });
    const session = server.registry.get(dead.id)!;
    await waitFor(() => session.status === "exited");
    const outcome = session.submissions.submit("late-client", { id: "sub-after-exit", generation: session.generation, body: Buffer.from("x"), submitKey: Buffer.from("\r") }, {
      generation: session.generation,
      running: false,
      bracketedPaste: false,
      write: () => {
        throw new Error("gone");
      },
      drained: async () => false,
    });
    expect(outcome.now.map((d) => d.status)).toEqual([{ id: "sub-after-exit", state: "failed", error: "write" }]);
    expect(outcome.settled).toBeNull();
  });

  it("stays received while the program does not read, and tells another client that asked meanwhile how it ended", async () => {
    // The program reads nothing until SIGUSR1: a large body fills the terminal's input queue.
    const s = await server.createSession({ command: ["bash", "--norc", "--noprofile", "-c", "stty raw -echo; trap 'cat > /dev/null' USR1; echo READY; while :; do sleep 0.02; done"] });
    const author = await connect(s.id, "author-tab");
    await author.waitForText("READY");
    const restored = await connect(s.id, "restored-tab");
    await attached(restored);
    author.submit("sub-slow-00001", "p".repeat(200_000), "\r");
    await waitFor(() => author.submitStatuses.some((x) => x.state === "received"));
    restored.query(["sub-slow-00001"]);
    await waitFor(() => restored.submitStatuses.length === 1);
    expect(restored.submitStatuses[0]).toEqual({ id: "sub-slow-00001", state: "received" });
    expect(author.submitStatuses.map((x) => x.state)).toEqual(["received"]);
    process.kill(s.pid!, "SIGUSR1");
    await waitFor(() => restored.submitStatuses.length === 2 && author.submitStatuses.length === 2, { message: "final state to both" });
    expect(restored.submitStatuses[1]).toEqual({ id: "sub-slow-00001", state: "written" });
    expect(author.submitStatuses[1]).toEqual({ id: "sub-slow-00001", state: "written" });
    await author.close();
    await restored.close();
  });

  it("answers partial, before the exit frame, when the program ends with the body still being written", async () => {
    // The program reads nothing and exits on SIGUSR1: a large body is still queued when it goes.
    const s = await server.createSession({ command: ["bash", "--norc", "--noprofile", "-c", "stty raw -echo; trap 'exit 3' USR1; echo READY; while :; do sleep 0.02; done"] });
    const c = await connect(s.id, "partial-client");
    await c.waitForText("READY");
    c.submit("sub-partial-001", "p".repeat(200_000), "\r");
    await waitFor(() => c.submitStatuses.some((x) => x.state === "received"));
    process.kill(s.pid!, "SIGUSR1");
    expect(await c.closed()).toBe(4410);
    expect(c.submitStatuses).toEqual([
      { id: "sub-partial-001", state: "received" },
      { id: "sub-partial-001", state: "partial" },
    ]);
    const types = c.types();
    expect(types.lastIndexOf("submitStatus")).toBeLessThan(types.indexOf("exit"));
    expect(types.at(-1)).toBe("exit");
    expect(server.registry.get(s.id)!.submissions.get("sub-partial-001")?.state).toBe("partial");
  });

  it("keeps the last 256 records: after 300 the oldest answer missing", async () => {
    const s = await server.createSession({ command: ["sh", "-c", "stty raw -echo; cat > /dev/null"] });
    const c = await connect(s.id, "bulk-submitter");
    await attached(c);
    for (let i = 0; i < 300; i++) c.submit(`bulk-${String(i).padStart(4, "0")}`, "x", "");
    await waitFor(() => c.submitStatuses.filter((x) => x.state === "written").length === 300);
    c.query(["bulk-0000", "bulk-0043", "bulk-0044", "bulk-0299"]);
    await waitFor(() => c.submitStatuses.length === 604);
    expect(c.submitStatuses.slice(600).map((x) => x.state)).toEqual(["missing", "missing", "written", "written"]);
    await c.close();
  });

  it("writes a multi-line body as one bracketed paste when the program has 2004 on", async () => {
    const s = await readerSession("paste");
    const c = await connect(s.id, "paste-client");
    await c.waitForText("READY");
    expect(server.registry.get(s.id)!.modes.bracketedPaste).toBe(true);
    c.submit("sub-paste-001", "line one\nline two", "\r");
    const expected = bytesOf("\x1b[200~line one\nline two\x1b[201~\r");
    await c.waitForText(expected);
    // a body trying to end the paste early cannot break out of it
    c.submit("sub-paste-002", "a\x1b[201~rm -rf", "\r");
    await c.waitForText(bytesOf("\x1b[200~arm -rf\x1b[201~\r"));
    await c.close();
  });
});

describe("colour-scheme reports and attention", () => {
  it("broadcasts 0x06 with colorSchemeReports after the output that turned 2031 on, and reports it after the ring wrapped", async () => {
    const s = await server.createSession({ command: [...TEST_SHELL_COMMAND, "-i"], env: { PS1: "$ " } });
    const c = await connect(s.id, "scheme-client");
    await c.waitForText("$ ");
    expect(c.control?.colorSchemeReports).toBe(false);
    c.type("printf 'before-2031\\e[?2031hafter-2031\\n'\r");
    await waitFor(() => c.control?.colorSchemeReports === true);
    const frames = c.frames;
    const controlIndex = frames.findLastIndex((f) => f.type === "control");
    const outputBefore = frames.slice(0, controlIndex).filter((f) => f.type === "output").map((f) => Buffer.from((f as { data: Uint8Array }).data).toString()).join("");
    expect(outputBefore).toContain("\x1b[?2031h");
    c.type("seq 1 30000\r"); // far more than the 64 KiB ring
    await waitFor(() => server.registry.get(s.id)!.stats().truncated);
    const fresh = await connect(s.id, "scheme-late");
    await attached(fresh);
    expect(fresh.position?.truncated).toBe(true);
    expect(fresh.control?.colorSchemeReports).toBe(true);
    expect(fresh.snapshots[0]!.toString()).toContain("\x1b[?2031h");
    c.type("printf '\\e[?2031l'\r");
    await waitFor(() => fresh.control?.colorSchemeReports === false);
    // off and on again within one write: clients see both changes, in order
    const before = fresh.frames.length;
    c.type("printf '\\e[?2031h\\e[?2031l\\e[?2031h'\r");
    await waitFor(() => fresh.frames.slice(before).filter((f) => f.type === "control").length >= 3);
    const states = fresh.frames.slice(before).flatMap((f) => (f.type === "control" ? [f.control.colorSchemeReports] : []));
    expect(states.slice(0, 3)).toEqual([true, false, true]);
    await c.close();
    await fresh.close();
  });

  it("sets attention on BEL and clears it on input, not on auto-replies", async () => {
    const s = await readerSession();
    const c = await connect(s.id, "attention-client");
    await c.waitForText("READY");
    const ringer = await server.createSession({ command: ["sh", "-c", "printf 'ding\\a'; sleep 100"] });
    const r = server.registry.get(ringer.id)!;
    await waitFor(() => r.info().attention);
    const rc = await connect(ringer.id, "attention-client");
    await attached(rc);
    rc.autoReply("\x1b[1;1R");
    await rc.roundTrip();
    expect(r.info().attention).toBe(true);
    rc.type("k");
    await waitFor(() => !r.info().attention);
    // a submission is user input too
    const again = await server.createSession({ command: ["sh", "-c", "printf 'ding\\a'; exec cat > /dev/null"] });
    const g = server.registry.get(again.id)!;
    await waitFor(() => g.info().attention);
    const gc = await connect(again.id, "attention-submitter");
    await attached(gc);
    gc.submit("sub-attention-1", "ok", "\r");
    await waitFor(() => !g.info().attention, { message: "submission clears attention" });
    await gc.close();
    // BEL inside an OSC title is no bell
    const titled = await server.createSession({ command: ["sh", "-c", "printf '\\e]0;title\\a'; echo done; sleep 100"] });
    const t = server.registry.get(titled.id)!;
    await waitFor(() => t.info().title === "title");
    expect(t.info().attention).toBe(false);
    await rc.close();
    await c.close();
  });
});

describe("submission frames from hostile clients", () => {
  it("ignores a submission whose header cannot be read at all", async () => {
    const s = await readerSession();
    const c = await connect(s.id, "hostile-submit");
    await c.waitForText("READY");
    c.send(Buffer.concat([Buffer.from([0x03]), Buffer.from("not json\nbody")]));
    c.send(encodeSubmit({ id: "sub-fine-0001", generation: c.generation! }, "ok", ""));
    await waitFor(() => c.submitStatuses.some((x) => x.state === "written"));
    expect(c.submitStatuses.map((x) => x.id)).toEqual(["sub-fine-0001", "sub-fine-0001"]);
    await c.close();
  });
});
