/**
 * The redraw request after a truncated reset, against the programs it must not damage: an Ink app
 * (the kind coding agents are built with), vim, htop and an opencode-style full-frame TUI. Each
 * screen (the controller's, an observer's and the server's own headless one) is compared cell by
 * cell (text, colours and attributes, the cursor, and the history above the screen) before and after
 * a late client's reset.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Session } from "../session/session.ts";
import { styledLine } from "../session/styled-line.js";
import { TerminalClient } from "../testing/terminal-client.ts";
import { startTestServer, type TestServer } from "../testing/test-server.ts";
import { waitFor } from "../testing/wait.ts";

/** A ring this small is truncated by the flood each program starts after. */
const SMALL_RING = 64 * 1024;
/** ~109 KB of output before the program starts: every later reset is a truncated one. */
const FLOOD = "seq 1 20000";
/** A program's first frame: Node alone loading React and Ink takes 2–5 s on a busy 2-core machine, more beside a whole test run. */
const PROGRAM_START_MS = 60_000;
/** Each test: its program's start plus a few settles. */
const TEST_TIMEOUT_MS = PROGRAM_START_MS + 60_000;
/** Output counts as settled once nothing new came for this long (a TUI's repaint is one burst). */
const QUIET_MS = 400;
const COLS = 80;
const ROWS = 24;
/** Lines of history compared too: debris scrolled off the screen would land there. */
const SCROLLBACK_COMPARED = 3 * ROWS;
const TUI_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "testing", "tui");

let server: TestServer;
let htoprc: string;
let vimFile: string;
beforeAll(async () => {
  server = await startTestServer({ bufferBytes: SMALL_RING });
  // htop with nothing that changes by itself: only its own process (by PID), no CPU or memory meters.
  htoprc = join(server.dataDir, "htop", "htoprc");
  mkdirSync(dirname(htoprc), { recursive: true });
  writeFileSync(
    htoprc,
    ["fields=0 1", "sort_key=0", "sort_direction=1", "hide_kernel_threads=1", "hide_userland_threads=1", "header_layout=one_100", "column_meters_0=Hostname", "column_meter_modes_0=2", ""].join("\n"),
  );
  vimFile = join(server.dataDir, "notes.txt");
  writeFileSync(vimFile, Array.from({ length: 200 }, (_, i) => `note ${i + 1}: ${"word ".repeat(i % 12)}`).join("\n") + "\n");
});
afterAll(async () => {
  await server?.stop();
});

type Program = {
  name: string;
  /** the shell command run after the flood */
  command: () => string;
  env?: () => Record<string, string>;
  /** on the screen once the program has drawn itself */
  ready: string;
  /** keys typed before the screens are compared (each waits for its echo) */
  keys?: { type: string; shows: string }[];
  alternate: boolean;
};

const ink: Program = {
  name: "an Ink prompt (normal screen, redraws relative to the cursor)",
  command: () => `exec node ${join(TUI_DIR, "ink-prompt.mjs")}`,
  // Ink renders nothing interactive when it believes it runs in CI.
  env: () => ({ CI: "false" }),
  ready: "INK-READY",
  keys: [{ type: "hello world", shows: "11 chars" }],
  alternate: false,
};
const vim: Program = {
  name: "vim",
  command: () => `exec vim -u NONE -i NONE -N -n ${vimFile}`,
  ready: "note 1:",
  keys: [{ type: "30j", shows: "note 31" }],
  alternate: true,
};
const htop: Program = {
  name: "htop",
  command: () => "exec htop -d 600 -p $$",
  env: () => ({ HTOPRC: htoprc }),
  ready: "F10Quit",
  alternate: true,
};
const fullFrame: Program = {
  name: "an opencode-style full-frame TUI (repaints only on a size change)",
  command: () => `exec node ${join(TUI_DIR, "full-frame.mjs")}`,
  ready: "FRAME-READY",
  alternate: true,
};

type Screen = { lines: string[]; scrollback: string[]; cursor: { row: number; col: number } };

const connect = (id: string, options: ConstructorParameters<typeof TerminalClient>[2] = {}) =>
  TerminalClient.connect(server.url, id, { token: server.token, screen: { cols: COLS, rows: ROWS }, ...options });

async function clientScreen(client: TerminalClient): Promise<Screen> {
  const term = client.term!;
  await new Promise<void>((resolve) => term.write("", resolve));
  const buffer = term.buffer.active;
  const scratch = buffer.getNullCell();
  const lines: string[] = [];
  for (let y = 0; y < term.rows; y++) lines.push(styledLine(buffer.getLine(buffer.baseY + y), scratch));
  // History always lives in the normal buffer (the alternate one has none).
  const normal = term.buffer.normal;
  const scrollback: string[] = [];
  for (let y = Math.max(0, normal.baseY - SCROLLBACK_COMPARED); y < normal.baseY; y++) scrollback.push(styledLine(normal.getLine(y), scratch));
  return { lines, scrollback, cursor: { row: buffer.cursorY, col: buffer.cursorX } };
}

async function serverScreen(session: Session): Promise<Screen> {
  const read = await session.readScreen({ scrollback: SCROLLBACK_COMPARED, styled: true });
  return { lines: read.lines, scrollback: read.scrollback, cursor: read.cursor };
}

/** Wait until the program has been quiet for QUIET_MS and every client and the mirror have all of it. */
async function settled(session: Session, clients: TerminalClient[]): Promise<void> {
  let end = -1;
  let since = Date.now();
  await waitFor(
    () => {
      if (session.stats().end !== end) {
        end = session.stats().end;
        since = Date.now();
        return false;
      }
      const stats = session.stats().screen;
      const mirrored = stats.pendingBytes === 0 && stats.parsedBytes === stats.postedBytes;
      return Date.now() - since >= QUIET_MS && mirrored && clients.every((c) => c.offset === end);
    },
    { timeout: 20_000, message: "output settled" },
  );
}

/** A running program after the flood, with a controller and an observer that watched it draw. */
async function start(program: Program) {
  const env = program.env?.() ?? {};
  const info = await server.createSession({ command: ["sh", "-c", `${FLOOD}; ${program.command()}`], cols: COLS, rows: ROWS, env });
  const session = server.registry.get(info.id)!;
  const controller = await connect(info.id, { client: `ctl-${info.id}` });
  await waitFor(async () => (await controller.screenLines()).some((l) => l.includes(program.ready)), { timeout: PROGRAM_START_MS, message: `${program.name} drawn` });
  for (const key of program.keys ?? []) {
    controller.type(key.type);
    await waitFor(async () => (await controller.screenLines()).some((l) => l.includes(key.shows)), { message: `${program.name} showing ${key.shows}` });
  }
  expect(session.stats().truncated).toBe(true);
  const observer = await connect(info.id, { client: `obs-${info.id}` });
  await observer.waitForFrames((f) => f.some((x) => x.type === "status"));
  await settled(session, [controller, observer]);
  return { info, session, controller, observer };
}

type Views = Record<"controller" | "observer" | "server", Screen>;

async function views(session: Session, controller: TerminalClient, observer: TerminalClient): Promise<Views> {
  return { controller: await clientScreen(controller), observer: await clientScreen(observer), server: await serverScreen(session) };
}

describe("the redraw request after a truncated reset", () => {
  for (const program of [ink, vim, htop, fullFrame]) {
    it(`leaves every screen as it was for ${program.name} when the reset could not carry the screen (history=0)`, async () => {
      const { info, session, controller, observer } = await start(program);
      const before = await views(session, controller, observer);
      expect(session.modes.alternateScreen).toBe(program.alternate);

      const late = await connect(info.id, { query: { history: "0" } });
      await late.waitForFrames((f) => f.some((x) => x.type === "status"));
      const stream = server.terminals.streamOf(info.id)!;
      // The program is asked to repaint: its PTY is one column narrower for a moment.
      await waitFor(() => stream.redrawPending || controller.offset > late.position!.end, { message: "redraw request under way" });
      await waitFor(() => !stream.redrawPending, { message: "redraw request over" });
      await settled(session, [controller, observer, late]);
      if (program === fullFrame) expect(controller.text.includes(`FRAME-READY ${COLS - 1}x${ROWS}`)).toBe(true);

      const after = await views(session, controller, observer);
      expect(after).toEqual(before);
      // A full-screen program's repaint is the late client's whole screen (it asked for no history).
      if (program.alternate) expect({ ...(await clientScreen(late)), scrollback: [] }).toEqual({ ...before.controller, scrollback: [] });
      expect(session.cols).toBe(COLS);
      await Promise.all([late.close(), observer.close(), controller.close()]);
    }, TEST_TIMEOUT_MS);
  }

  it("does not touch the PTY's size when the reset carried the screen, so vim keeps its message line", async () => {
    const { info, session, controller, observer } = await start({ ...vim, keys: [{ type: ':echo "kept message"\r', shows: "kept message" }] });
    const before = await views(session, controller, observer);
    const late = await connect(info.id);
    await late.waitForFrames((f) => f.some((x) => x.type === "status"));
    expect(server.terminals.streamOf(info.id)!.redrawPending).toBe(false);
    await settled(session, [controller, observer, late]);
    const after = await views(session, controller, observer);
    expect(after).toEqual(before);
    expect(after.controller.lines[ROWS - 1]).toContain("kept message");
    expect((await late.screenLines())[ROWS - 1]).toContain("kept message");
    await Promise.all([late.close(), observer.close(), controller.close()]);
  }, TEST_TIMEOUT_MS);

  it("does not repaint a full-frame TUI when the reset carried the screen: the snapshot is its screen", async () => {
    const { info, session, controller, observer } = await start(fullFrame);
    const end = session.stats().end;
    const late = await connect(info.id);
    await late.waitForFrames((f) => f.some((x) => x.type === "status"));
    await settled(session, [controller, observer, late]);
    // It paints only when its size changes: any output now would be a repaint.
    expect(session.stats().end).toBe(end);
    expect(await late.screenLines()).toEqual(await controller.screenLines());
    await Promise.all([late.close(), observer.close(), controller.close()]);
  }, TEST_TIMEOUT_MS);

  it("asks once after the server's copy of the screen lost output, not again at every later reset", async () => {
    const { info, session, controller, observer } = await start(fullFrame);
    const frame = await controller.screenLines();
    const copy = await serverScreen(session);
    // A flood past the mirror's parse budget: it keeps only the flood's tail and rebuilds from that
    // (a gap), so its screen is no longer the program's.
    const flood = new TextEncoder().encode("lost output\r\n".repeat(20_000));
    const gaps = session.stats().screen.gaps;
    for (let i = 0; i < 100 && !session.stats().screen.skimming; i++) Session.mirrorForFaultTests(session).write(flood);
    await waitFor(() => !session.stats().screen.skimming && session.stats().screen.gaps > gaps, { timeout: 20_000, message: "flood skimmed" });
    expect((await serverScreen(session)).lines.at(-2)).toBe("lost output");

    const healer = await connect(info.id);
    await healer.waitForFrames((f) => f.some((x) => x.type === "status"));
    expect(server.terminals.streamOf(info.id)!.redrawPending).toBe(true);
    await waitFor(() => !server.terminals.streamOf(info.id)!.redrawPending, { message: "redraw request over" });
    await settled(session, [controller, observer, healer]);
    // The repaint healed the copy's screen (its history before the flood stays lost), and the client that got the broken copy.
    expect({ ...(await serverScreen(session)), scrollback: [] }).toEqual({ ...copy, scrollback: [] });
    expect(await healer.screenLines()).toEqual(frame);

    // Healed: later resets carry the screen, also from a new stream once every connection left.
    const end = session.stats().end;
    const second = await connect(info.id);
    await second.waitForFrames((f) => f.some((x) => x.type === "status"));
    expect(server.terminals.streamOf(info.id)!.redrawPending).toBe(false);
    await Promise.all([second.close(), healer.close(), observer.close(), controller.close()]);
    await waitFor(() => server.terminals.streamOf(info.id) === undefined, { message: "every connection gone" });
    const returning = await connect(info.id);
    await returning.waitForFrames((f) => f.some((x) => x.type === "status"));
    expect(server.terminals.streamOf(info.id)!.redrawPending).toBe(false);
    await settled(session, [returning]);
    expect(session.stats().end).toBe(end);
    expect(await returning.screenLines()).toEqual(frame);
    await returning.close();
  }, TEST_TIMEOUT_MS);
});
