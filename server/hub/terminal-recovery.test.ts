import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CloseCode } from "../contract/protocol.ts";
import { SEND_QUEUE_LIMIT_BYTES, WRITE_DRAIN_TIMEOUT_MS } from "./flow-control.ts";
import { TerminalClient } from "../testing/terminal-client.ts";
import { startTestServer, TEST_SHELL_COMMAND, type TestServer } from "../testing/test-server.ts";
import { waitFor } from "../testing/wait.ts";

/** A ring this small wraps after a few screens. */
const SMALL_RING = 64 * 1024;

let server: TestServer;
let pagerFile: string;
beforeAll(async () => {
  server = await startTestServer({ bufferBytes: SMALL_RING });
  pagerFile = join(server.dataDir, "pager.txt");
  writeFileSync(pagerFile, Array.from({ length: 5000 }, (_, i) => `line ${String(i + 1).padStart(4, "0")} ${"·".repeat(60)}`).join("\n") + "\n");
});
afterAll(async () => {
  await server?.stop();
});

const connect = (id: string, options: ConstructorParameters<typeof TerminalClient>[2] = {}) =>
  TerminalClient.connect(server.url, id, { token: server.token, ...options });

/** Page through `less` until the ring has dropped its earliest output; returns the controller. */
async function lessWithWrappedRing() {
  const s = await server.createSession({ command: ["less", pagerFile], cols: 100, rows: 30, env: { LESS: "", LESSHISTFILE: "-" } });
  const controller = await connect(s.id, { client: "pager-ctl", screen: { cols: 100, rows: 30 } });
  await controller.waitForText("line 0001");
  for (let page = 0; page < 40; page++) controller.type(" ");
  // page 41 starts at line 29*40+1 = 1161
  await waitFor(async () => (await controller.screenLines()).some((l) => l.startsWith("line 1161")), { message: "less paged" });
  await waitFor(() => server.registry.get(s.id)!.stats().truncated, { message: "ring truncated" });
  return { s, controller };
}

describe("reset after truncation", () => {
  it("brings back the alternate screen and the current page of a running less", async () => {
    const { s, controller } = await lessWithWrappedRing();
    const viewer = await connect(s.id, { client: "pager-viewer", screen: { cols: 100, rows: 30 } });
    await viewer.waitForFrames((f) => f.some((x) => x.type === "status"));
    expect(viewer.position).toMatchObject({ mode: "reset", truncated: true });
    expect(viewer.position!.start).toBe(viewer.position!.end);
    const lines = await viewer.screenLines();
    expect(viewer.term!.buffer.active.type).toBe("alternate");
    expect(lines[0]).toMatch(/^line 1161/);
    expect(lines.filter((l) => l.startsWith("line ")).length).toBe(29);
    // The snapshot carried the screen, so less is not asked to repaint (docs/design.md, Redraw request).
    expect(server.terminals.streamOf(s.id)!.redrawPending).toBe(false);
    // The logical grid did not change: nobody was resized.
    expect(viewer.control).toMatchObject({ cols: 100, rows: 30, controller: { clientId: "pager-ctl" } });
    await viewer.close();
    await controller.close();
  });

  it("with history=0 sends modes only, and the repaint alone restores the screen", async () => {
    const { s, controller } = await lessWithWrappedRing();
    const viewer = await connect(s.id, { query: { history: "0" }, screen: { cols: 100, rows: 30 } });
    await viewer.waitForFrames((f) => f.some((x) => x.type === "status"));
    const snapshot = viewer.snapshots[0]!.toString();
    expect(snapshot).toContain("\x1b[?1049h");
    expect(snapshot).not.toContain("line ");
    await waitFor(async () => (await viewer.screenLines())[0]!.startsWith("line 1161"), { message: "screen repainted by less" });
    await viewer.close();
    await controller.close();
  });

  it("lets a controller resize made during the redraw window win over the restore", async () => {
    const s = await server.createSession({
      command: ["sh", "-c", `seq 1 20000; trap 'echo WINCH $(stty size)' WINCH; echo armed; while :; do sleep 0.01; done`],
      cols: 80,
      rows: 24,
    });
    const controller = await connect(s.id, { client: "resizer-1" });
    await controller.waitForText("armed");
    // A modes-only reset asks for a redraw: the PTY is one column narrower for a moment; answer it at once with a real resize.
    const viewer = await connect(s.id, { client: "viewer-1", query: { history: "0" } });
    await controller.waitForText("WINCH 24 79");
    controller.resize(100, 30);
    await controller.waitForText("WINCH 30 100");
    const stream = server.terminals.streamOf(s.id)!;
    await waitFor(() => !stream.redrawPending, { message: "redraw window over" });
    // Ask the program for the PTY's real size now that the restore has run.
    const mark = controller.text.length;
    process.kill(s.pid!, "SIGWINCH");
    await waitFor(() => /WINCH \d+ \d+/.test(controller.text.slice(mark)), { message: "size report" });
    expect(controller.text.slice(mark)).toMatch(/WINCH 30 100/);
    expect(server.registry.get(s.id)!.cols).toBe(100);
    await viewer.close();
    await controller.close();
  });
});

describe("back-pressure", () => {
  it("cuts a client that stops reading with 4408 while the controller keeps full speed", async () => {
    const s = await server.createSession({ command: [...TEST_SHELL_COMMAND, "-i"], env: { PS1: "$ " } });
    const fast = await connect(s.id, { client: "fast-ctl" });
    await fast.waitForText("$ ");
    const slow = await connect(s.id, { client: "slow-obs" });
    await slow.waitForFrames((f) => f.some((x) => x.type === "status"));
    const socket = (slow.ws as unknown as { _socket: Socket })._socket;
    socket.pause();
    // A flood that runs until it is stopped (the old `seq 1 3000000; echo FLOOD-DONE` was "done" as
    // soon as the command line's own echo showed FLOOD-DONE, so nothing waited for the flood).
    fast.type("seq 1 100000000\r");
    // The reader that keeps up is never held to the stalled one's pace: while the stalled one is
    // waiting to be cut, the flood never stops for anything like the drain timeout that cuts a
    // stalled pacer (a bound on the flood's speed would measure the machine, not the server).
    let seen = fast.offset;
    let lastGrowth = Date.now();
    let longestStall = 0;
    const watch = setInterval(() => {
      const now = Date.now();
      if (fast.offset !== seen) {
        seen = fast.offset;
        lastGrowth = now;
      } else longestStall = Math.max(longestStall, now - lastGrowth);
    }, 50);
    try {
      await waitFor(() => server.terminals.stats().connections === 1, { timeout: 120_000, message: "slow connection cut on the server while the flood runs" });
    } finally {
      clearInterval(watch);
    }
    expect(longestStall).toBeLessThan(WRITE_DRAIN_TIMEOUT_MS / 2);
    expect(fast.offset).toBeGreaterThan(SEND_QUEUE_LIMIT_BYTES);
    fast.type("\x03");
    await fast.waitForText(/\$ $/, 30_000);
    socket.resume();
    expect(await slow.closed()).toBe(CloseCode.TOO_SLOW);
    // It resumes from where it was and ends with exactly the right bytes.
    const back = await connect(s.id, { client: "slow-obs", resume: { generation: slow.generation!, offset: slow.offset } });
    await back.waitForFrames((f) => f.some((x) => x.type === "status"));
    expect(["append", "reset"]).toContain(back.position!.mode);
    await back.close();
    await fast.close();
  }, 180_000);

  it("gets Ctrl-C through a flood of `yes` and returns the prompt quickly", async () => {
    const s = await server.createSession({ command: [...TEST_SHELL_COMMAND, "-i"], env: { PS1: "PROMPT> " } });
    const ctl = await connect(s.id, { client: "ctrlc-ctl" });
    await ctl.waitForText("PROMPT> ");
    ctl.type("yes\r");
    await waitFor(() => ctl.offset > 2_000_000, { message: "yes is flooding", timeout: 20_000 });
    const sent = Date.now();
    const mark = ctl.output.length;
    ctl.type("\x03");
    await waitFor(() => ctl.output.subarray(mark).includes("PROMPT> "), { message: "prompt after Ctrl-C", timeout: 10_000 });
    expect(Date.now() - sent).toBeLessThan(2_000);
    await ctl.close();
  });
});
