/**
 * `webmux attach` / `webmux run` end to end: a real server on port 0, real programs in its PTYs, and
 * the CLI itself running inside another real PTY (node-pty) that plays the user's terminal.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { decodeClientFrame, type ClientMessage } from "../contract/frames.ts";
import { TerminalStream, type AttachOptions } from "../hub/terminal-stream.ts";
import type { TerminalConnection } from "../hub/terminal-connection.ts";
import { TerminalClient } from "../testing/terminal-client.ts";
import { startTestServer, TEST_SHELL_COMMAND, type TestServer } from "../testing/test-server.ts";
import { waitFor } from "../testing/wait.ts";
import { OuterTerminal } from "./outer-terminal.ts";
import { QueryScanner } from "./query-scanner.ts";

/** Asks every kind of device query at start and on SIGUSR1, and shows each read as `got:<hex>`. */
const QUERY_RECORDER = join(import.meta.dirname, "..", "testing", "tui", "query-recorder.mjs");

const PROMPT = /[$#] $/;
const hex = (s: string) => Buffer.from(s, "latin1").toString("hex");
/** The echo program's line for one read of exactly `bytes` (the outer PTY may add CRs). */
const gotLine = (bytes: string) => new RegExp(`got:${hex(bytes)}\r+\n`);

/**
 * A program that shows what it reads: every read from its terminal is printed as `got:<hex>`.
 * Flags: `2031` turns colour-scheme reports on; `toggle` turns them off after a dark report and on
 * again when it reads `t`; `bel` rings the bell (attention); `cpr` asks for the cursor position.
 */
const ECHO_PROGRAM = `
const flags = new Set(process.argv.slice(2));
process.stdin.setRawMode(true);
let out = "";
if (flags.has("2031")) out += "\\x1b[?2031h";
if (flags.has("bel")) out += "\\x07";
out += "READY\\r\\n";
if (flags.has("cpr")) out += "\\x1b[6n";
process.stdout.write(out);
process.stdin.on("data", (d) => {
  process.stdout.write("got:" + d.toString("hex") + "\\r\\n");
  if (flags.has("toggle") && d.toString() === "\\x1b[?997;1n") process.stdout.write("\\x1b[?2031l");
  if (flags.has("toggle") && d.toString() === "t") process.stdout.write("\\x1b[?2031h");
});
`;

let server: TestServer;
let env: Record<string, string>;
let scratch: string;
let echoProgram: string;
const outers: OuterTerminal[] = [];
const clients: TerminalClient[] = [];

/** Client frames the server handled, with the connection's client ID (a test-only tap on the hub). */
const handled: { clientId: string; connectionId: number; message: ClientMessage }[] = [];
const originalHandleFrame = TerminalStream.prototype.handleFrame;
/** Every connection the hub attached, with the resume point it asked for (the same tap). */
const attached: { sessionId: string; clientId: string; connectionId: number; resume: AttachOptions["resume"] }[] = [];
const originalAttach = TerminalStream.prototype.attach;

beforeAll(async () => {
  server = await startTestServer();
  env = { WEBMUX_URL: server.url, WEBMUX_TOKEN: server.token };
  scratch = mkdtempSync(join(tmpdir(), "webmux-attach-"));
  echoProgram = join(scratch, "echo-input.cjs");
  writeFileSync(echoProgram, ECHO_PROGRAM);
  TerminalStream.prototype.handleFrame = function (this: TerminalStream, conn: TerminalConnection, data: Uint8Array) {
    const message = decodeClientFrame(data);
    if (message.type !== "invalid") handled.push({ clientId: conn.clientId, connectionId: conn.id, message });
    return originalHandleFrame.call(this, conn, data);
  };
  TerminalStream.prototype.attach = function (this: TerminalStream, conn: TerminalConnection, options: AttachOptions) {
    attached.push({ sessionId: this.session.id, clientId: conn.clientId, connectionId: conn.id, resume: options.resume });
    return originalAttach.call(this, conn, options);
  };
});

afterEach(async () => {
  for (const outer of outers.splice(0)) outer.kill();
  for (const client of clients.splice(0)) await client.close();
});

afterAll(async () => {
  TerminalStream.prototype.handleFrame = originalHandleFrame;
  TerminalStream.prototype.attach = originalAttach;
  await server.stop();
  rmSync(scratch, { recursive: true, force: true });
});

function outer(args: string[], options?: ConstructorParameters<typeof OuterTerminal>[2]): OuterTerminal {
  const t = new OuterTerminal(args, env, options);
  outers.push(t);
  return t;
}

async function observer(id: string, clientId: string): Promise<TerminalClient> {
  const c = await TerminalClient.connect(server.url, id, { token: server.token, client: clientId });
  clients.push(c);
  return c;
}

/** The session `webmux run` created: the newest one running `command[0]`. */
async function sessionRunning(program: string): Promise<string> {
  const info = await waitFor(() => server.registry.infos().filter((s) => s.command.includes(program)).sort((a, b) => b.createdAt - a.createdAt)[0], {
    message: `a session running ${program}`,
  });
  return info.id;
}

/** The number of the first whole `seq` line that starts after output offset `offset` of the session. */
async function lineAfter(id: string, offset: number): Promise<string> {
  const session = server.registry.get(id)!;
  return waitFor(
    () => {
      if (offset < session.stats().start) throw new RangeError(`offset ${offset} is no longer retained`);
      const ahead = Buffer.from(session.readOutput(offset, offset + 64)).toString("latin1");
      return /\n(\d+)\r/.exec(ahead)?.[1];
    },
    { message: `a whole line of output after offset ${offset}` },
  );
}

describe("webmux attach", () => {
  it("shows the session, sends what is typed, and the detach key exits 0 with the terminal restored and the session still running", async () => {
    const s = await server.createSession();
    const t = outer(["attach", s.id], { then: "echo STTY; stty -a" });
    await t.waitForOutput(PROMPT);
    t.type("echo hel''lo\r");
    await t.waitForOutput("hello\r");
    const detachAt = t.output.length;
    t.type("\x1c");
    expect(await t.exitCode()).toBe(0);
    const stty = t.output.slice(t.output.indexOf("STTY"));
    // cooked mode again: line editing and echo on
    expect(stty).toMatch(/(^|\s)icanon(\s|$)/);
    expect(stty).toMatch(/(^|\s)echo(\s|$)/);
    expect(t.output).toContain(`detached from ${s.id}; it keeps running. Re-attach with: webmux attach --url ${server.url} ${s.id}`);
    const restore = t.output.slice(detachAt, t.output.indexOf("STTY"));
    expect(restore).toContain("\x1b[?2031l");
    // bash was not in the alternate screen: leaving it (which restores a saved cursor) would be wrong
    expect(restore).not.toContain("\x1b[?1049l");
    const session = server.registry.get(s.id)!;
    await waitFor(() => session.info().clients === 0, { message: "the CLI's connection to close" });
    expect(session.status).toBe("running");
    const later = await observer(s.id, "later-look");
    later.type("echo still-$((40+2))\r");
    await later.waitForText("still-42");
  });

  it("detaches with the key --detach-key names, and types the default one through to the program", async () => {
    const s = await server.createSession({ command: [process.execPath, echoProgram] });
    const t = outer(["attach", "--detach-key", "ctrl-]", s.id]);
    await t.waitForOutput("READY");
    t.type("\x1c");
    await t.waitForOutput(gotLine("\x1c"));
    t.type("\x1d");
    expect(await t.exitCode()).toBe(0);
    expect(t.output).toContain(`detached from ${s.id}`);
    expect(server.registry.get(s.id)!.status).toBe("running");

    // the same from WEBMUX_DETACH_KEY, which attach --help names
    const fromEnv = new OuterTerminal(["attach", s.id], { ...env, WEBMUX_DETACH_KEY: "^]" });
    outers.push(fromEnv);
    await fromEnv.waitForOutput("READY");
    const at = fromEnv.output.length;
    fromEnv.type("\x1c");
    await fromEnv.waitForOutput(gotLine("\x1c"), { from: at });
    fromEnv.type("\x1d");
    expect(await fromEnv.exitCode()).toBe(0);
    const help = new OuterTerminal(["attach", "--help"], env);
    outers.push(help);
    expect(await help.exitCode()).toBe(0);
    expect(help.output).toMatch(/--detach-key .*\[WEBMUX_DETACH_KEY\]/);
  });

  it("lets a full-screen program work, and detaching from it leaves its alternate screen and modes", async () => {
    const file = join(scratch, "notes.txt");
    const run = outer(["run", "--", "vim", "-u", "NONE", "-N", "-n", file]);
    await run.waitForOutput("\x1b[?1049h");
    await run.waitForOutput(/notes\.txt/);
    run.type("ihello from vim\x1b");
    run.type(":wq\r");
    expect(await run.exitCode()).toBe(0);
    expect(readFileSync(file, "utf8")).toBe("hello from vim\n");

    const s = await server.createSession({ command: ["vim", "-u", "NONE", "-N", "-n"] });
    const t = outer(["attach", s.id]);
    await t.waitForOutput("\x1b[?1049h");
    await t.waitForOutput(/~/);
    const detachAt = t.output.length;
    t.type("\x1c");
    expect(await t.exitCode()).toBe(0);
    const restore = t.output.slice(detachAt);
    expect(restore).toContain("\x1b[?1049l");
    expect(restore).toContain("\x1b[?25h");
    expect(server.registry.get(s.id)!.status).toBe("running");
  });

  it("sends the local size while controlling, and not while another client controls", async () => {
    const s = await server.createSession({ command: TEST_SHELL_COMMAND, cols: 80, rows: 24 });
    const t = outer(["attach", s.id], { cols: 100, rows: 30 });
    await t.waitForOutput(PROMPT);
    t.type("stty size\r");
    await t.waitForOutput("30 100\r");
    let mark = t.output.length;
    t.resize(120, 40);
    await waitFor(() => server.registry.get(s.id)!.info().cols === 120, { message: "the new size reaches the session" });
    t.type("stty size\r");
    await t.waitForOutput("40 120\r", { from: mark });

    // another client types: it takes control, the CLI watches
    const cliId = server.registry.get(s.id)!.info().controller!.clientId;
    const other = await observer(s.id, "other-device");
    other.type("\r");
    await waitFor(() => server.registry.get(s.id)!.info().controller?.clientId === "other-device", { message: "control moves" });
    const resizesBefore = handled.filter((h) => h.clientId === cliId && h.message.type === "resize").length;
    t.resize(90, 20);
    // the CLI does send its new size (the server decides), but as an observer it changes nothing
    await waitFor(() => handled.filter((h) => h.clientId === cliId && h.message.type === "resize").length > resizesBefore, { message: "the CLI's resize" });
    expect(server.registry.get(s.id)!.info()).toMatchObject({ cols: 120, rows: 40 });
    mark = t.output.length;
    other.type("stty size\r");
    await t.waitForOutput("40 120\r", { from: mark });

    // typing takes control back, and then the local size counts again
    t.type(" ");
    await waitFor(() => server.registry.get(s.id)!.info().cols === 90, { message: "the CLI's size applies once it controls" });
    mark = t.output.length;
    t.type("\x15stty size\r");
    await t.waitForOutput("20 90\r", { from: mark });
  });

  it("resumes after 4408 and after a network drop mid-output, with no line lost or doubled", async () => {
    // ~3 MB: the CLI's resume point stays inside the 4 MiB ring even if the program runs free meanwhile
    const lines = 450_000;
    // The program waits for a line after its output, so its stream is there at every cut even when
    // the server has sent it all before the CLI has shown it; Enter at the end lets it exit 0.
    const script = `seq 1 ${lines}; read _`;
    const t = outer(["run", "--", "sh", "-c", script]);
    const id = await sessionRunning(script);
    const cuts: [number, () => Promise<void>][] = [
      [
        20_000,
        async () => {
          // the program is still running (it waits for a line at the end), so the stream is there
          const stream = await waitFor(() => server.terminals.streamOf(id), { message: "the CLI's stream" });
          stream.closeAll(4408, "too slow; reconnect and resume");
        },
      ],
      [150_000, async () => server.acceptor.terminateAll()], // the network drops: no close frame at all
    ];
    for (const [i, [at, cut]] of cuts.entries()) {
      await t.waitForOutput(`\n${at}\r`, { timeout: 30_000 });
      // What the CLI shows lags what it has received: cut only once its previous reconnect is in…
      const connection = await waitFor(() => attached.filter((a) => a.sessionId === id)[i], { message: `the CLI's connection ${i + 1}` });
      // …and has brought it bytes: a line that starts past the point it resumed from is on its
      // screen, so its resume point has moved on (else the cut would resume from the same offset).
      const resumedFrom = connection.resume?.offset ?? 0;
      await t.waitForOutput(`\n${await lineAfter(id, resumedFrom)}\r`, { timeout: 30_000 });
      expect(t.output).not.toContain(`\n${lines}\r`); // mid-output: the CLI has not shown the end yet
      await cut();
    }
    await t.waitForOutput(`\n${lines}\r`, { timeout: 30_000 });
    // The screen can show the end while the CLI is still reconnecting after the drop, and keys typed
    // while disconnected are dropped: type Enter once its last connection is open (it sent its size).
    const last = await waitFor(() => attached.filter((a) => a.sessionId === id)[cuts.length], { message: "the CLI's last connection" });
    await waitFor(() => handled.some((h) => h.connectionId === last.connectionId), { message: "the CLI's last connection to open" });
    t.type("\r");
    expect(await t.exitCode(30_000)).toBe(0);
    const numbers = t.output
      .replace(/\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[^[]/g, "")
      .split(/\r*\n/)
      .filter((l) => /^\d+$/.test(l))
      .map(Number);
    expect(numbers.length).toBe(lines);
    expect(numbers.every((n, i) => n === i + 1)).toBe(true);
    // both cuts really cut: the CLI connected three times, resuming its generation from a later
    // offset each time (the ID it keeps across reconnects is the controller's)
    const connections = attached.filter((a) => a.sessionId === id);
    expect(connections).toHaveLength(3);
    expect(new Set(connections.map((c) => c.clientId)).size).toBe(1);
    const [firstConnection, afterSlow, afterDrop] = connections;
    expect(firstConnection!.resume).toBeNull();
    const generation = server.registry.get(id)!.generation;
    expect(afterSlow!.resume).toMatchObject({ generation });
    expect(afterDrop!.resume).toMatchObject({ generation });
    expect(afterSlow!.resume!.offset).toBeGreaterThan(0);
    expect(afterDrop!.resume!.offset).toBeGreaterThan(afterSlow!.resume!.offset);
    // resumed with append each time: the terminal was reset only once, on the first attach
    expect(t.output.split("\x1bc").length - 1).toBe(1);
  }, 60_000);

  it("exits 0 without reconnecting when the session moved (4409)", async () => {
    const s = await server.createSession();
    const t = outer(["attach", s.id]);
    await t.waitForOutput(PROMPT);
    server.terminals.streamOf(s.id)!.closeAll(4409, "session moved: chat");
    expect(await t.exitCode()).toBe(0);
    expect(t.output).toContain(`detached: session ${s.id} moved to its chat end`);
    expect(server.registry.get(s.id)!.info().clients).toBe(0);
  });

  it("reconnects after a server restart and says why when the session is gone there (4404)", async () => {
    const first = await startTestServer();
    try {
      const s = await first.createSession();
      const t = new OuterTerminal(["attach", s.id], { WEBMUX_URL: first.url, WEBMUX_TOKEN: first.token });
      outers.push(t);
      await t.waitForOutput(PROMPT);
      await first.stop();
      // the same address again, but a new server: it has never heard of the session
      const second = await startTestServer({ port: first.port });
      try {
        expect(await t.exitCode(), t.output).toBe(1);
        expect(t.output).toContain(`session ${s.id} is gone (session not found)`);
      } finally {
        await second.stop();
      }
    } finally {
      await first.stop();
    }
  });

  it("says the session was deleted when it is killed while attached", async () => {
    const s = await server.createSession();
    const t = outer(["attach", s.id]);
    await t.waitForOutput(PROMPT);
    await server.api(`/api/sessions/${s.id}`, { method: "DELETE" });
    expect(await t.exitCode()).toBe(1);
    expect(t.output).toContain(`session ${s.id} is gone (session deleted)`);
    expect(t.output).not.toContain("has exited");
  });

  it("shows an exited session's final screen and exits with its status (4410)", async () => {
    const s = await server.createSession({ command: ["sh", "-c", "echo last-words-$((6*7)); exit 7"] });
    await waitFor(() => server.registry.get(s.id)!.status === "exited", { message: "the program exits" });
    const t = outer(["attach", s.id]);
    expect(await t.exitCode()).toBe(7);
    expect(t.output).toContain("last-words-42");
    expect(t.output).toContain(`session ${s.id} has exited with status 7`);
  });
});

describe("webmux run", () => {
  it("exits with the program's status", async () => {
    const t = outer(["run", "--", "sh", "-c", "exit 3"]);
    expect(await t.exitCode()).toBe(3);
  });

  it("detaching leaves the program running and says how to re-attach", async () => {
    const t = outer(["run", "--title", "keep me", "--", ...TEST_SHELL_COMMAND]);
    await t.waitForOutput(PROMPT);
    t.type("\x1c");
    expect(await t.exitCode()).toBe(0);
    const match = /Re-attach with: webmux attach --url \S+ ([a-z0-9]{8})/.exec(t.output);
    expect(match).not.toBeNull();
    const info = server.registry.get(match![1]!)!.info();
    expect(info).toMatchObject({ title: "keep me", status: "running" });
  });
});

/** The program's reads (got:<hex> lines) as hex strings. */
const reads = (t: OuterTerminal) => [...t.output.matchAll(/got:([0-9a-f]+)/g)].map((m) => m[1]!);

describe("replayed device queries", () => {
  /** A session whose ring holds the recorder's queries, asked while nobody was attached. */
  async function askedSession() {
    const s = await server.createSession({ command: [process.execPath, QUERY_RECORDER] });
    const session = server.registry.get(s.id)!;
    await waitFor(() => Buffer.from(session.readOutput()).includes("QUERIES-ASKED-1"), { message: "queries asked" });
    return { s, session };
  }

  it("are not shown to the local terminal in a reset's snapshot, so nothing answers them", async () => {
    const { s } = await askedSession();
    const t = outer(["attach", s.id]);
    const terminal = t.answerQueries();
    await t.waitForOutput("QUERIES-ASKED-1");
    await terminal.parsed(); // any answer it had to give is typed by now, before END
    t.type("END");
    await t.waitForOutput(gotLine("END"));
    expect(reads(t)).toEqual([hex("END")]);
    expect(new QueryScanner().feed(Buffer.from(t.output, "latin1"))).toEqual([]);
    const cli = handled.filter((h) => attached.some((a) => a.connectionId === h.connectionId && a.sessionId === s.id));
    expect(cli.filter((h) => h.message.type === "autoReply")).toEqual([]);
    // and it told the server it had parsed its replay (docs/protocol.md, Client → server frames)
    expect(cli.some((h) => h.message.type === "replayParsed")).toBe(true);
  });

  it("are not shown to the local terminal in an append resume's missing bytes either", async () => {
    const { s, session } = await askedSession();
    const t = outer(["attach", s.id]);
    const terminal = t.answerQueries();
    await t.waitForOutput("QUERIES-ASKED-1");
    await terminal.parsed();
    // The CLI is cut off (stopped, its socket dropped) while the program asks again.
    process.kill(t.pid, "SIGSTOP");
    try {
      server.acceptor.terminateAll();
      process.kill(session.info().pid!, "SIGUSR1");
      await waitFor(() => Buffer.from(session.readOutput()).includes("QUERIES-ASKED-2"), { message: "asked again" });
    } finally {
      process.kill(t.pid, "SIGCONT");
    }
    const at = await t.waitForOutput("QUERIES-ASKED-2");
    const second = await waitFor(() => attached.filter((a) => a.sessionId === s.id)[1], { message: "the CLI's second connection" });
    expect(second.resume).not.toBeNull();
    await terminal.parsed();
    t.type("END");
    await t.waitForOutput(gotLine("END"), { from: at });
    expect(reads(t)).toEqual([hex("END")]);
    // appended, not reset: the terminal was reset once, and the queries never reached it
    expect(t.output.split("\x1bc").length - 1).toBe(1);
    expect(new QueryScanner().feed(Buffer.from(t.output, "latin1"))).toEqual([]);
  });
});

describe("terminal replies", () => {
  it("answers colour-scheme reports from the local terminal's OSC 11 answer, never passing the answer itself on", async () => {
    const t = outer(["run", "--", process.execPath, echoProgram, "2031", "toggle"]);
    let at = await t.waitForOutput("\x1b]11;?");
    t.type("\x1b]11;rgb:0000/0000/0000\x1b\\"); // a dark background
    at = await t.waitForOutput(gotLine("\x1b[?997;1n"), { from: at });
    at = await t.waitForOutput("\x1b[?2031l", { from: at });
    // the program turns 2031 on again: the CLI asks again
    t.type("t");
    at = await t.waitForOutput("\x1b]11;?", { from: at });
    t.type("\x1b]11;rgb:ffff/ffff/ffff\x07"); // now a light one, BEL-terminated
    await t.waitForOutput(gotLine("\x1b[?997;2n"), { from: at });
    const got = t.output.match(/got:[0-9a-f]+/g);
    expect(got).toEqual([`got:${hex("\x1b[?997;1n")}`, `got:${hex("t")}`, `got:${hex("\x1b[?997;2n")}`]);
  });

  it("asks the local terminal's background when typing takes control of a program with 2031 on, not while watching", async () => {
    const s = await server.createSession({ command: [process.execPath, echoProgram, "2031"] });
    const other = await observer(s.id, "other-device");
    await other.waitForText("READY");
    await waitFor(() => server.registry.get(s.id)!.info().controller?.clientId === "other-device", { message: "the first client controls" });
    const t = outer(["attach", s.id]);
    await t.waitForOutput("READY");
    // watching, it does not ask (a query would come with the control frame, before the replay's READY)
    expect(t.output).not.toContain("\x1b]11;?");
    t.type("x"); // takes control
    const at = await t.waitForOutput("\x1b]11;?");
    t.type("\x1b]11;rgb:f0f0/f0f0/e0e0\x1b\\"); // a light background
    await other.waitForText(`got:${hex("\x1b[?997;2n")}`);
    await t.waitForOutput(gotLine("\x1b[?997;2n"), { from: at });
    expect(t.output.match(/got:[0-9a-f]+/g)).toEqual([`got:${hex("x")}`, `got:${hex("\x1b[?997;2n")}`]);
  });

  it("sends no colour-scheme report when the local terminal does not answer OSC 11", async () => {
    // a terminal that ignores OSC 11 but answers DA1, like most do
    const t = outer(["run", "--", process.execPath, echoProgram, "2031"]);
    let at = await t.waitForOutput("\x1b]11;?");
    await t.waitForOutput("\x1b[c", { from: at });
    t.type("\x1b[?62;22c");
    t.type("x");
    at = await t.waitForOutput(gotLine("x"));
    expect(t.output.match(/got:[0-9a-f]+/g)).toEqual([`got:${hex("x")}`]);

    // a terminal that answers nothing at all
    const mute = outer(["run", "--", process.execPath, echoProgram, "2031"]);
    await mute.waitForOutput("\x1b]11;?");
    mute.type("y");
    await mute.waitForOutput(gotLine("y"));
    expect(mute.output.match(/got:[0-9a-f]+/g)).toEqual([`got:${hex("y")}`]);
  });

  it("sends the local terminal's answer to a device query as an auto-reply, and the same bytes typed unasked as keys", async () => {
    const t = outer(["run", "--", process.execPath, echoProgram, "bel", "cpr"]);
    const at = await t.waitForOutput("\x1b[6n");
    const id = await sessionRunning(echoProgram);
    const session = server.registry.get(id)!;
    expect(session.info().attention).toBe(true);
    // the answer to the program's CPR query (it has the shape of Shift+F3 too)
    t.type("\x1b[1;2R");
    await t.waitForOutput(gotLine("\x1b[1;2R"), { from: at });
    const cli = handled.filter((h) => h.clientId === session.info().controller?.clientId);
    expect(cli.filter((h) => h.message.type === "autoReply")).toHaveLength(1);
    expect(cli.some((h) => h.message.type === "input")).toBe(false);
    expect(session.info().attention).toBe(true); // an auto-reply is not the user: the bell stays
    // no query outstanding now: Shift+F3 is a key
    t.type("\x1b[1;2R");
    await waitFor(() => (t.output.match(/got:/g) ?? []).length === 2, { message: "the second read" });
    expect(handled.filter((h) => h.clientId === session.info().controller?.clientId && h.message.type === "input")).toHaveLength(1);
    expect(session.info().attention).toBe(false);
  });
});
