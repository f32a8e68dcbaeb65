/**
 * The differential tests of docs/design.md § Snapshots: a headless client that stayed connected all
 * along and one that joins later (fresh, or with an old resume point) after the ring wrapped or the
 * grid was resized must show the same thing, cell by cell (characters, widths, colours, attributes,
 * cursor, modes and the state only later output reveals), and still after more output.
 * Real server, real PTYs, real WebSockets.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join as joinPath } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Session } from "../session/session.ts";
import { TerminalClient } from "../testing/terminal-client.ts";
import { statesAtOnePoint } from "../testing/differential.ts";
import { stateDifferences } from "../testing/screen-state.ts";
import { startTestServer, type TestServer } from "../testing/test-server.ts";
import { waitFor } from "../testing/wait.ts";

/** A small ring, so a few thousand lines of output truncate it. */
const RING_BYTES = 64 * 1024;
/** Output that wraps the ring several times over. */
const FLOOD = "seq 1 40000";
/** Lines of history above the screen compared too (debris and lost wraps land there). */
const HISTORY_COMPARED = 200;
/** Deadline for anything a busy two-core machine does (program start, a flood, a replay). */
const SLOW_MS = 60_000;

/** Ink draws live only outside CI, and in colour only when told (the PTY's environment has no colour hints). */
const INK_ENV = { CI: "false", FORCE_COLOR: "1" };

const TUI_DIR = fileURLToPath(new URL("../testing/tui/", import.meta.url));

let server: TestServer;
let notes = "";
let htoprc = "";
beforeAll(async () => {
  server = await startTestServer({ bufferBytes: RING_BYTES });
  notes = joinPath(server.dataDir, "notes.txt");
  writeFileSync(notes, Array.from({ length: 300 }, (_, i) => `note ${i + 1}: ${"word ".repeat(i % 12)}`).join("\n") + "\n");
  htoprc = joinPath(server.dataDir, "htop", "htoprc");
  mkdirSync(dirname(htoprc), { recursive: true });
  writeFileSync(htoprc, ["fields=0 1", "sort_key=0", "sort_direction=1", "hide_kernel_threads=1", "hide_userland_threads=1", "header_layout=one_100", "column_meters_0=Hostname", "column_meter_modes_0=2", ""].join("\n"));
});
afterAll(async () => {
  await server?.stop();
});

const ringHas = (session: Session, text: string) => {
  const tail = session.readOutput(session.stats().end - 4096);
  return Buffer.from(tail).includes(text);
};

type Joined = { session: Session; stayed: TerminalClient; clients: TerminalClient[] };

/**
 * A session running `script` under bash (no echo) whose output starts once `stayed` is
 * connected; resolves when the output contains `ready`.
 */
async function started(script: string, ready: string, size = { cols: 80, rows: 24 }, env: Record<string, string> = {}): Promise<Joined> {
  const info = await server.createSession({
    command: ["bash", "--norc", "--noprofile", "-c", `stty -echo; IFS= read -r _go; ${script}`],
    cols: size.cols,
    rows: size.rows,
    env,
  });
  const session = server.registry.get(info.id)!;
  const stayed = await TerminalClient.connect(server.url, info.id, { token: server.token, client: "stayed", screen: size });
  await stayed.waitForFrames((f) => f.some((x) => x.type === "status"), SLOW_MS);
  stayed.type("\r");
  // In the output, or on the screen (a program that draws between words with escapes, htop).
  await waitFor(async () => ringHas(session, ready) || (await stayed.screenLines()).some((line) => line.includes(ready)), { timeout: SLOW_MS, message: `output ${ready}` });
  return { session, stayed, clients: [stayed] };
}

async function join(joined: Joined, options: { resume?: { generation: string; offset: number } } = {}): Promise<TerminalClient> {
  const client = await TerminalClient.connect(server.url, joined.session.id, { token: server.token, client: `late-${joined.clients.length}`, screen: { cols: 10, rows: 5 }, ...options });
  joined.clients.push(client);
  await client.waitForFrames((f) => f.some((x) => x.type === "status"), SLOW_MS);
  return client;
}

async function expectSameScreens(joined: Joined, what: string): Promise<void> {
  const [expected, ...others] = await statesAtOnePoint(() => joined.session.stats().end, joined.clients, { scrollback: HISTORY_COMPARED, timeout: SLOW_MS });
  for (const [i, state] of others.entries()) {
    expect(stateDifferences(expected!, state), `${what}: ${i === 0 ? "first" : "another"} late client`).toEqual([]);
  }
}

async function closeAll(joined: Joined): Promise<void> {
  for (const c of joined.clients) await c.close();
}

describe("a late client sees what a client that stayed sees", { timeout: 4 * SLOW_MS }, () => {
  it("emoji are two cells wide in the snapshot as in the browser: text after them keeps its column", async () => {
    const joined = await started(`${FLOOD}; printf '\\360\\237\\230\\200%.0s' 1 2 3 4; printf '\\e[31GMARK\\r\\n'; echo READY; exec cat`, "READY");
    const late = await join(joined);
    expect(late.position).toMatchObject({ mode: "reset", truncated: true });
    await expectSameScreens(joined, "after the reset");
    const row = (await late.screenLines()).find((line) => line.includes("MARK"))!;
    const stayedRow = (await joined.stayed.screenLines()).find((line) => line.includes("MARK"))!;
    expect(row.indexOf("MARK")).toBe(stayedRow.indexOf("MARK"));
    joined.stayed.type("\u{1F600}\u{1F600}x\r");
    await waitFor(() => ringHas(joined.session, "x\r\n"), { timeout: SLOW_MS, message: "more output" });
    await expectSameScreens(joined, "after more output");
    await closeAll(joined);
  });

  /** Terminal state only later output reveals, set up after the ring wrapped: printf lines, then keystrokes that `cat` prints back. */
  const synthetic: { name: string; setup: string; more: string }[] = [
    { name: "a scroll region with a status bar under it (apt)", setup: "\\e[24;1H\\e[7mstatus 10%%\\e[0m\\e[1;23r\\e[23;1H", more: Array.from({ length: 30 }, (_, i) => `more ${i}\r`).join("") },
    { name: "DEC line drawing, G0 and G1 with SO", setup: "\\e(0lqqk\\e(B plain \\e)0\\016lqk", more: "lqqqk x\r" },
    { name: "insert mode", setup: "abcdef\\e[4h\\e[3D", more: "XY\r" },
    { name: "origin mode set after drawing, in a scroll region", setup: "\\e[5;20r\\e[?6h\\e[2;3Hin", more: "\x1b[1;1Htop\x1b[30;1Hbottom\r" },
    { name: "a line at the right margin (pending wrap)", setup: "\\e[2J\\e[H%080d", more: "z\r" },
    { name: "the alternate screen with a saved cursor in both buffers", setup: "\\e[5;5H\\e7\\e[?1049h\\e[3;3Halt\\e[2;2H\\e[1m\\e7\\e[0m\\e[9;9H", more: "\x1b8u\x1b[?1049l\x1b8back\r" },
    { name: "mouse mode, bracketed paste, focus, application keys", setup: "\\e[?1002h\\e[?1006h\\e[?2004h\\e[?1004h\\e[?1h\\e=\\e[?25l", more: "ok\r" },
    { name: "CJK and emoji placed by column", setup: "\\346\\274\\242\\345\\255\\227\\360\\237\\230\\200\\e[20GMARK", more: "\u6f22x\x1b[30Gy\r" },
  ];
  for (const scenario of synthetic) {
    it(`after the ring wrapped: ${scenario.name}`, async () => {
      const joined = await started(`${FLOOD}; printf 'READY\\r\\n${scenario.setup}'; exec cat`, "READY");
      await waitFor(() => joined.stayed.offset === joined.session.stats().end, { timeout: SLOW_MS, message: "setup shown" });
      const late = await join(joined);
      expect(late.position).toMatchObject({ mode: "reset", truncated: true });
      await expectSameScreens(joined, "after the reset");
      joined.stayed.type(scenario.more);
      await waitFor(() => joined.session.stats().end > late.position!.end, { timeout: SLOW_MS, message: "more output" });
      await expectSameScreens(joined, "after more output");
      await closeAll(joined);
    });
  }

  it("the ring ends inside a sequence (a colour split by a line feed, two bytes of 漢): late clients read its rest as the mirror does", async () => {
    const tailIs = (bytes: number[]) => Buffer.from(joined.session.readOutput(joined.session.stats().end - bytes.length)).equals(Buffer.from(bytes));
    // Each half is followed by a read: the rest comes once the controller types a line.
    const joined = await started(`${FLOOD}; printf 'READY\\n\\e[3\\n'; IFS= read -r _; printf '1mred\\e[0m after\\n\\346\\274'; IFS= read -r _; printf '\\242 done\\n'; exec cat`, "READY");
    await waitFor(() => tailIs([0x1b, 0x5b, 0x33, 0x0d, 0x0a]), { timeout: SLOW_MS, message: "half a colour" });
    const fresh = await join(joined);
    const resumed = await join(joined, { resume: { generation: joined.session.generation, offset: 1 } });
    for (const late of [fresh, resumed]) expect(late.position).toMatchObject({ mode: "reset", truncated: true });
    await expectSameScreens(joined, "inside the colour");
    joined.stayed.type("\r");
    await waitFor(() => tailIs([0xe6, 0xbc]), { timeout: SLOW_MS, message: "two bytes of 漢" });
    await expectSameScreens(joined, "after the colour");
    expect((await fresh.screenLines()).some((line) => line.startsWith("red after"))).toBe(true);
    const another = await join(joined);
    expect(another.position).toMatchObject({ mode: "reset", truncated: true });
    await expectSameScreens(joined, "inside 漢");
    joined.stayed.type("\r");
    await waitFor(() => ringHas(joined.session, " done"), { timeout: SLOW_MS, message: "the rest of 漢" });
    await expectSameScreens(joined, "after 漢");
    expect((await another.screenLines()).some((line) => line.startsWith("漢 done"))).toBe(true);
    await closeAll(joined);
  });

  it("a late client after one resize (vim, 100×30 grown to 120×40): the screen as it is, not the old size's bytes", async () => {
    const file = `/tmp/webmux-fidelity-${process.pid}.txt`;
    const joined = await started(`seq 1 300 > ${file}; exec vim -u NONE -N -i NONE -c 'set laststatus=2' ${file}`, "300L", { cols: 100, rows: 30 });
    joined.stayed.resize(120, 40);
    await waitFor(() => joined.stayed.control?.cols === 120 && joined.session.cols === 120, { timeout: SLOW_MS, message: "resized" });
    joined.stayed.type(":echo 'RESIZED'\r");
    await waitFor(() => ringHas(joined.session, "RESIZED"), { timeout: SLOW_MS, message: "vim answered after the resize" });
    const late = await join(joined);
    expect(late.position).toMatchObject({ mode: "reset", start: 0, truncated: false });
    await expectSameScreens(joined, "after the reset");
    joined.stayed.type("40jzz:echo 'MORE'\r");
    await waitFor(() => ringHas(joined.session, "MORE"), { timeout: SLOW_MS, message: "vim scrolled" });
    await expectSameScreens(joined, "after more output");
    joined.stayed.type(":q!\r");
    await closeAll(joined);
  });

  /**
   * Real programs after the ring wrapped: keys typed (each waits for what it shows) before the late
   * client joins, then keys typed after it joined (`joined`: a program still drawing is brought to
   * rest) before the first comparison, then more.
   */
  const programs: {
    name: string;
    command: () => string;
    ready: string;
    env?: () => Record<string, string>;
    before: [string, string][];
    joined?: [string, string][];
    /** output the late client gets live after its reset, before the `joined` keys (it joined while the program was drawing) */
    live?: string;
    more: [string, string][];
  }[] = [
    { name: "vim, scrolled, then split", command: () => `exec vim -u NONE -i NONE -N -n ${notes}`, ready: "note 1:", before: [["60j", "note 6"], [":split\r", "notes.txt"]], more: [["\x17j20j", "note 8"], [":echo 'MORE'\r", "MORE"]] },
    {
      // Each step waits for a line first shown by that step's page; the comparison itself waits
      // until every client has rendered all of less's output (statesAtOnePoint).
      name: "less, paged and searched (matches highlighted)",
      command: () => `exec less ${notes}`,
      ready: "note 23:",
      before: [[" ", "note 46:"], ["/7: \r", "note 49:"]],
      more: [[" ", "note 72:"], ["n", "note 79:"], ["/note 9\r", "note 112:"]],
    },
    { name: "htop", command: () => "exec htop -d 600 -p $$", env: () => ({ HTOPRC: htoprc }), ready: "F10Quit", before: [], more: [["\x1bOQ", "Meters"]] },
    { name: "an Ink app (spinner-free prompt that re-renders as you type)", command: () => `exec node ${joinPath(TUI_DIR, "ink-prompt.mjs")}`, env: () => INK_ENV, ready: "INK-READY", before: [["hello", "5 chars"]], more: [[" world", "11 chars"]] },
    {
      // The late client joins while the spinner turns; Tab finishes the task (the spinner stops, the
      // list re-renders) before each comparison.
      name: "an Ink agent: a spinner, a task list that re-renders, a text input",
      command: () => `exec node ${joinPath(TUI_DIR, "ink-agent.mjs")}`,
      env: () => INK_ENV,
      ready: "AGENT-READY",
      before: [["write tests", "11 chars"], ["\r", "write tests · tick 3"]],
      joined: [["\t", "2 done"]],
      live: "write tests · tick",
      more: [["fix the bug", "11 chars"], ["\r", "fix the bug · tick 3"], ["\t", "3 done"]],
    },
    {
      name: "progress bars redrawn with \\r and cursor-up",
      command: () => `printf 'build  [      ]\\ntests  [      ]\\n'; IFS= read -r _a; printf '\\e[2A\\rbuild  [###   ]\\n\\rtests  [#     ]\\nSTEP1'; IFS= read -r _b; printf '\\r\\e[2A\\rbuild  [######]\\n\\rtests  [###   ]\\nSTEP2'; exec cat`,
      ready: "tests",
      before: [["\r", "STEP1"]],
      more: [["\r", "STEP2"]],
    },
  ];
  for (const program of programs) {
    it(`after the ring wrapped: ${program.name}`, async () => {
      const joined = await started(`${FLOOD}; ${program.command()}`, program.ready, { cols: 80, rows: 24 }, program.env?.() ?? {});
      for (const [keys, shows] of program.before) {
        joined.stayed.type(keys);
        await waitFor(() => ringHas(joined.session, shows), { timeout: SLOW_MS, message: shows });
      }
      const late = await join(joined);
      expect(late.position).toMatchObject({ mode: "reset", truncated: true });
      const live = program.live;
      if (live) await waitFor(() => late.text.includes(live), { timeout: SLOW_MS, message: `${live} live after the reset` });
      for (const [keys, shows] of program.joined ?? []) {
        joined.stayed.type(keys);
        await waitFor(() => ringHas(joined.session, shows), { timeout: SLOW_MS, message: shows });
      }
      await expectSameScreens(joined, "after the reset");
      for (const [keys, shows] of program.more) {
        joined.stayed.type(keys);
        await waitFor(() => ringHas(joined.session, shows), { timeout: SLOW_MS, message: shows });
      }
      await expectSameScreens(joined, "after more output");
      await closeAll(joined);
    });
  }

  it("a resize storm between two controllers (vim): a fresh client and one with a resume point from before it see what both controllers see", async () => {
    const joined = await started(`exec vim -u NONE -i NONE -N -n ${notes}`, "note 1:", { cols: 80, rows: 24 });
    const oldPoint = { generation: joined.session.generation, offset: joined.stayed.offset };
    const other = await join(joined);
    for (let i = 1; i <= 6; i++) {
      const [who, cols, rows] = i % 2 ? [other, 70 + i * 3, 20 + i] : [joined.stayed, 90 - i, 30 - i];
      who.takeControl();
      who.resize(cols, rows);
      await waitFor(() => joined.session.cols === cols && joined.session.rows === rows, { timeout: SLOW_MS, message: `resize ${i}` });
    }
    joined.stayed.takeControl();
    joined.stayed.type(":echo 'STORM-OVER'\r");
    await waitFor(() => ringHas(joined.session, "STORM-OVER"), { timeout: SLOW_MS, message: "vim after the storm" });
    const fresh = await join(joined);
    const resumed = await join(joined, { resume: oldPoint });
    expect(fresh.position).toMatchObject({ mode: "reset", start: 0 });
    expect(resumed.position).toMatchObject({ mode: "reset", start: 0 });
    await expectSameScreens(joined, "after the storm");
    joined.stayed.type("20j:echo 'MORE'\r");
    await waitFor(() => ringHas(joined.session, "MORE"), { timeout: SLOW_MS, message: "vim scrolled" });
    await expectSameScreens(joined, "after more output");
    await closeAll(joined);
  });
});
