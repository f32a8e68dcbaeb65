import headless from "@xterm/headless";
import { describe, expect, it } from "vitest";
import type { PositionPayload } from "../../../server/contract/types.ts";
import { screenCells } from "../../../server/vt/screen-cells.ts";
import { terminalSnapshot } from "../../../server/vt/terminal-snapshot.js";
import { makeReplayWriter, SNAPSHOT_SLICE_BYTES } from "./replay-writer.ts";
import { TRUNCATION_MARKER } from "./truncation-marker.ts";

type Term = InstanceType<typeof headless.Terminal>;
const encoder = new TextEncoder();
const bytes = (text: string) => encoder.encode(text);
const terminal = () => new headless.Terminal({ cols: 60, rows: 8, scrollback: 5000, allowProposedApi: true });
const write = (term: Term, data: string) => new Promise<void>((resolve) => term.write(data, resolve));
/** Resolves once everything written so far is parsed. */
const parsed = (term: Term) => write(term, "");

/** A terminal and its writer, wired as the terminal view wires them: replies go out only while not muted. */
function harness() {
  const term = terminal();
  const sent: string[] = [];
  const rendered: Array<[string, number]> = [];
  const acknowledged: number[] = [];
  const writer = makeReplayWriter(term, {
    rendered: (generation, offset) => rendered.push([generation, offset]),
    replayParsed: (socket) => acknowledged.push(socket),
  });
  term.onData((reply) => {
    if (!writer.repliesMuted) sent.push(reply);
  });
  return { term, writer, sent, rendered, acknowledged };
}

const append = (start: number, end: number): PositionPayload => ({ generation: "g1", mode: "append", start, end, truncated: false });

describe("the replay writer", () => {
  it("answers no device query in replayed bytes, acknowledges the replay once it is parsed, and answers live queries again", async () => {
    const { term, writer, sent, rendered, acknowledged } = harness();
    // The local copy, then an append resume whose missing bytes hold a cursor-position and a device-attributes query.
    writer.writeCopy("copy\x1b[6n\r\n", "g1", 10, () => {});
    writer.position(append(10, 30));
    writer.output(bytes("missed\x1b[6n\x1b[c\r\n"), "g1", 30);
    writer.status(7);
    await parsed(term);
    expect(sent).toEqual([]);
    expect(acknowledged).toEqual([7]);
    expect(rendered).toEqual([
      ["g1", 10],
      ["g1", 30],
    ]);
    // Live output after the replay: its query is the program's, asked now.
    writer.output(bytes("live\x1b[6n"), "g1", 40);
    await parsed(term);
    expect(sent).toEqual(["\x1b[3;5R"]); // row 3 ("live"), column 5
    // A later status frame on the same socket ends no replay and acknowledges nothing again.
    writer.status(7);
    await parsed(term);
    expect(acknowledged).toEqual([7]);
  });

  it("ends a replay its socket lost: the next socket's live bytes are answered, and nothing is acknowledged for the lost one", async () => {
    const { term, writer, sent, acknowledged } = harness();
    writer.position(append(0, 20));
    writer.output(bytes("\x1b[6n"), "g1", 4);
    writer.socketLost();
    writer.output(bytes("\x1b[6n"), "g1", 8);
    await parsed(term);
    expect(sent).toEqual(["\x1b[1;1R"]);
    expect(acknowledged).toEqual([]);
  });

  it("paints a truncated reset's snapshot after RIS, in slices, with the marker in the history only, and renders its end once", async () => {
    const program = terminal();
    let text = "";
    for (let i = 0; i < 2500; i++) text += `\x1b[3${i % 8}mline ${i} ${"·".repeat(i % 40)}\x1b[0m\r\n`;
    await write(program, text + "\x1b[2;5H\x1b[7mcursor here");
    const snapshot = bytes(terminalSnapshot(program));
    expect(snapshot.length).toBeGreaterThan(SNAPSHOT_SLICE_BYTES); // more than one slice

    const { term, writer, sent, rendered } = harness();
    await write(term, "old screen that RIS clears\r\n\x1b[?25l");
    writer.position({ generation: "g2", mode: "reset", start: 9000, end: 123456, truncated: true });
    let painted = 0;
    writer.snapshot(snapshot, () => painted++);
    writer.status(1);
    await parsed(term);
    expect(painted).toBe(1);
    expect(rendered).toEqual([["g2", 123456]]);
    expect(sent).toEqual([]);
    expect(term.buffer.active.getLine(0)?.translateToString(true)).toBe(TRUNCATION_MARKER);
    const onScreen = (t: Term) => screenCells(t).slice(-t.rows);
    expect(onScreen(term)).toEqual(onScreen(program));
    expect([term.buffer.active.cursorX, term.buffer.active.cursorY]).toEqual([program.buffer.active.cursorX, program.buffer.active.cursorY]);
  });

  it("writes nothing for a snapshot without a position frame before it", async () => {
    const { term, writer, rendered } = harness();
    await write(term, "kept");
    writer.snapshot(bytes("\x1bcgone"), () => {});
    await parsed(term);
    expect(rendered).toEqual([]);
    expect(term.buffer.active.getLine(0)?.translateToString(true)).toBe("kept");
  });
});
