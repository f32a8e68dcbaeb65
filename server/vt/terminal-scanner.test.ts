import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { MAX_OSC_PAYLOAD_BYTES, TerminalScanner } from "./terminal-scanner.ts";
import type { ScanEvent } from "./terminal-scanner.ts";
import { DEFAULT_TERMINAL_MODES } from "./terminal-modes.ts";
import { MAX_TITLE_LENGTH } from "./terminal-osc.ts";

const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);

/** Feed `chunks` in order; returns every event with `at` made absolute (offset in the whole stream). */
function scan(scanner: TerminalScanner, chunks: Uint8Array[]): ScanEvent[] {
  const out: ScanEvent[] = [];
  let base = 0;
  for (const chunk of chunks) {
    for (const e of scanner.feed(chunk)) out.push({ ...e, at: base + e.at });
    base += chunk.length;
  }
  return out;
}

/** Byte offset just after the first `piece` in `stream` (UTF-8): where an event for it must be reported. */
function after(stream: string, piece: string): number {
  const i = stream.indexOf(piece);
  if (i < 0) throw new Error(`${JSON.stringify(piece)} not in stream`);
  return bytes(stream.slice(0, i + piece.length)).length;
}

function scanText(s: string): { scanner: TerminalScanner; events: ScanEvent[] } {
  const scanner = new TerminalScanner();
  return { scanner, events: scan(scanner, [bytes(s)]) };
}

/** Everything observable after scanning: events (absolute), modes, restore bytes. */
function outcome(chunks: Uint8Array[]) {
  const scanner = new TerminalScanner();
  const events = scan(scanner, chunks);
  return { events, modes: scanner.modes, restore: scanner.restoreSequence() };
}

describe("TerminalScanner modes", () => {
  it("tracks the modes printf '\\e[?1049h\\e[?2004h\\e[?1000h\\e[?1006h' sets, and restores exactly those", () => {
    const out = execFileSync("bash", ["--norc", "--noprofile", "-c", String.raw`printf '\e[?1049h\e[?2004h\e[?1000h\e[?1006h'`]);
    const { scanner, events } = scanText(out.toString("latin1"));
    expect(scanner.modes).toEqual({
      ...DEFAULT_TERMINAL_MODES,
      alternateScreen: true,
      bracketedPaste: true,
      mouseTracking: 1000,
      mouseEncoding: 1006,
    });
    expect([scanner.alternateScreen, scanner.bracketedPaste, scanner.colorSchemeReports]).toEqual([true, true, false]);
    expect(events).toEqual([
      { type: "mode", at: 8, mode: 1049, on: true },
      { type: "mode", at: 16, mode: 2004, on: true },
      { type: "mode", at: 24, mode: 1000, on: true },
      { type: "mode", at: 32, mode: 1006, on: true },
    ]);
    expect(scanner.restoreSequence()).toBe("\x1b[?1049h\x1b[?1000h\x1b[?1006h\x1b[?2004h");
  });

  it("a fresh scanner restores nothing and its modes are the defaults", () => {
    const scanner = new TerminalScanner();
    expect(scanner.modes).toEqual(DEFAULT_TERMINAL_MODES);
    expect(scanner.restoreSequence()).toBe("");
    expect(Object.isFrozen(scanner.modes)).toBe(true);
  });

  it("the modes snapshot does not change after later output", () => {
    const scanner = new TerminalScanner();
    const before = scanner.modes;
    scanner.feed(bytes("\x1b[?2004h"));
    expect(before.bracketedPaste).toBe(false);
    expect(scanner.modes.bracketedPaste).toBe(true);
  });

  it("applies several parameters in one CSI ? Pm h", () => {
    const { scanner, events } = scanText("\x1b[?1;2004h");
    expect(events).toEqual([
      { type: "mode", at: 10, mode: 1, on: true },
      { type: "mode", at: 10, mode: 2004, on: true },
    ]);
    expect(scanner.modes.applicationCursorKeys).toBe(true);
    expect(scanner.restoreSequence()).toBe("\x1b[?1h\x1b[?2004h");
    expect(scan(scanner, [bytes("\x1b[?1;2004l")]).map((e) => e.type === "mode" && e.on)).toEqual([false, false]);
    expect(scanner.restoreSequence()).toBe("");
  });

  it("reports 2031 on and off once per change", () => {
    const stream = "\x1b[?2031h\x1b[?2031h x \x1b[?2031l";
    const { scanner, events } = scanText(stream);
    expect(events).toEqual([
      { type: "mode", at: 8, mode: 2031, on: true },
      { type: "mode", at: after(stream, "\x1b[?2031l"), mode: 2031, on: false },
    ]);
    expect(scanner.colorSchemeReports).toBe(false);
  });

  it("restores hidden cursor, no wraparound, keypad, focus events and 2031", () => {
    const { scanner } = scanText("\x1b[?25l\x1b[?7l\x1b=\x1b[?1004h\x1b[?2031h\x1b[?6h");
    expect(scanner.restoreSequence()).toBe("\x1b=\x1b[?6h\x1b[?7l\x1b[?25l\x1b[?1004h\x1b[?2031h");
    scanner.feed(bytes("\x1b>"));
    expect(scanner.modes.applicationKeypad).toBe(false);
  });

  it("treats 47, 1047 and 1049 as one alternate screen, entered with 1049 on restore", () => {
    const { scanner } = scanText("\x1b[?47h");
    expect(scanner.restoreSequence()).toBe("\x1b[?1049h");
    scanner.feed(bytes("\x1b[?1049l"));
    expect(scanner.alternateScreen).toBe(false);
  });

  it("keeps one mouse tracking mode; resetting any of them turns tracking off (as xterm.js does)", () => {
    const { scanner } = scanText("\x1b[?1000h\x1b[?1002h");
    expect(scanner.modes.mouseTracking).toBe(1002);
    expect(scanner.restoreSequence()).toBe("\x1b[?1002h");
    scanner.feed(bytes("\x1b[?1000l"));
    expect(scanner.modes.mouseTracking).toBe(0);
  });

  it("RIS (ESC c) resets every mode and reports each change", () => {
    const { scanner } = scanText("\x1b[?1049;2004;1003;1016;2031;25;1l\x1b[?1049;2004;1003;1016;2031;1h\x1b=");
    const events = scan(scanner, [bytes("ab\x1bc")]);
    expect(scanner.modes).toEqual(DEFAULT_TERMINAL_MODES);
    expect(scanner.restoreSequence()).toBe("");
    expect(events.every((e) => e.type === "mode" && e.at === 4)).toBe(true);
    expect(events.map((e) => e.type === "mode" && `${e.mode}:${e.on}`).sort()).toEqual(
      ["1:false", "1003:false", "1016:false", "1049:false", "2004:false", "2031:false", "25:true", "66:false"].sort(),
    );
  });

  it("DECSTR (CSI ! p) resets keyboard modes, paste and cursor, not the screen or mouse", () => {
    const { scanner } = scanText("\x1b[?1049h\x1b[?1000h\x1b[?2004h\x1b[?1h\x1b[?25l\x1b=\x1b[!p");
    expect(scanner.restoreSequence()).toBe("\x1b[?1049h\x1b[?1000h");
  });

  it("ignores sequences that only look like mode changes", () => {
    const stream =
      "\x1b[2004h" + // ANSI mode, not DEC private
        "\x1b[?2004$p" + // DECRQM query
        "\x1b(>" + // charset designation, not DECKPNM/DECKPAM
        "\x1b(=" +
        "\x1b[?20\x1804h" + // cancelled by CAN
        "\x1b_G\x07[?2004h\x1b\\" + // APC payload (BEL inside is not a bell)
      "\x1bP1$r\x1b[?25l\x1b\\"; // DCS ended by ESC: the CSI after it does apply
    const { scanner, events } = scanText(stream);
    expect(events).toEqual([{ type: "mode", at: after(stream, "[?25l"), mode: 25, on: false }]);
    expect(scanner.modes).toEqual({ ...DEFAULT_TERMINAL_MODES, cursorVisible: false });
  });

  it("reset() starts a new generation with default modes and no events", () => {
    const { scanner } = scanText("\x1b[?2004h\x1b]0;ti");
    scanner.reset();
    expect(scanner.modes).toEqual(DEFAULT_TERMINAL_MODES);
    expect(scanner.feed(bytes("tle\x07"))).toEqual([{ type: "bell", at: 4 }]);
  });
});

describe("TerminalScanner events", () => {
  it("returns the same empty array when nothing happened", () => {
    const scanner = new TerminalScanner();
    const a = scanner.feed(bytes("plain text\r\n\x1b[1;31mred\x1b[0m"));
    const b = scanner.feed(bytes("more"));
    expect(a).toHaveLength(0);
    expect(a).toBe(b);
  });

  it("reads the title from OSC 0 and OSC 2, terminated by BEL or ST", () => {
    const stream = "\x1b]0;vim: a.txt\x07x\x1b]2;héllo ✓\x1b\\\x1b]1;icon only\x07";
    const { events } = scanText(stream);
    expect(events).toEqual([
      { type: "title", at: after(stream, "a.txt\x07"), title: "vim: a.txt" },
      { type: "title", at: after(stream, "✓\x1b\\"), title: "héllo ✓" },
    ]);
  });

  it("ends an OSC at an ESC that starts another sequence (as xterm.js does)", () => {
    const { events } = scanText("\x1b]2;t\x1b[?2004h");
    expect(events).toEqual([
      { type: "title", at: 6, title: "t" },
      { type: "mode", at: 13, mode: 2004, on: true },
    ]);
  });

  it("cuts a long title to MAX_TITLE_LENGTH", () => {
    const { events } = scanText(`\x1b]2;${"x".repeat(1000)}\x07`);
    expect(events[0]).toMatchObject({ type: "title", title: "x".repeat(MAX_TITLE_LENGTH) });
  });

  it("reads the working directory from OSC 7, percent-decoded", () => {
    const { events } = scanText(
      "\x1b]7;file://box/home/u/my%20dir/%E2%9C%93%zz\x07" +
        "\x1b]7;kitty-shell-cwd://box/tmp/a b\x1b\\" +
        "\x1b]7;http://box/nope\x07",
    );
    expect(events.map((e) => e.type === "cwd" && e.cwd)).toEqual(["/home/u/my dir/✓%zz", "/tmp/a b"]);
  });

  it("reports BEL alone as a bell, but not BEL ending an OSC or inside a DCS", () => {
    const stream = "a\x07b\x1b]0;t\x07\x1bPq#0\x07\x1b\\\x07";
    const { events } = scanText(stream);
    expect(events).toEqual([
      { type: "bell", at: 2 },
      { type: "title", at: after(stream, "t\x07"), title: "t" },
      { type: "bell", at: bytes(stream).length },
    ]);
  });

  it("reports OSC 9 as a notification, but not ConEmu's OSC 9;4 progress", () => {
    const stream = "\x1b]9;4;1;50\x07\x1b]9;Build done\x07\x1b]9;4;0\x1b\\";
    const { events } = scanText(stream);
    expect(events).toEqual([{ type: "notify", at: after(stream, "done\x07"), body: "Build done" }]);
  });

  it("reports OSC 777;notify;title;body", () => {
    const stream = "\x1b]777;notify;Claude;Needs input; now\x1b\\\x1b]777;precmd\x07";
    const { events } = scanText(stream);
    expect(events).toEqual([
      { type: "notify", at: after(stream, "now\x1b\\"), title: "Claude", body: "Needs input; now" },
    ]);
  });

  it("passes OSC 133 and 633 shell-integration marks through", () => {
    const stream = "\x1b]133;A\x07$ ls\r\n\x1b]133;D;0\x1b\\\x1b]633;E;ls -l\x07";
    const { events } = scanText(stream);
    expect(events).toEqual([
      { type: "osc", at: 8, code: 133, data: "A" },
      { type: "osc", at: after(stream, "D;0\x1b\\"), code: 133, data: "D;0" },
      { type: "osc", at: bytes(stream).length, code: 633, data: "E;ls -l" },
    ]);
  });

  it("takes an OSC payload of exactly the cap and ignores a longer one", () => {
    const exact = "y".repeat(MAX_OSC_PAYLOAD_BYTES);
    const tooLong = "z".repeat(MAX_OSC_PAYLOAD_BYTES + 1);
    const { events } = scanText(`\x1b]9;${exact}\x07\x1b]9;${tooLong}\x07\x1b]9;${tooLong}\x1b\\\x1b]2;ok\x07`);
    expect(events.map((e) => e.type)).toEqual(["notify", "title"]);
    expect(events[0]).toMatchObject({ body: exact });
    expect(events[1]).toMatchObject({ title: "ok" });
    expect(MAX_OSC_PAYLOAD_BYTES).toBeLessThanOrEqual(64 * 1024);
  });

  it("skips a 64 MB unterminated OSC without holding on to it", () => {
    const scanner = new TerminalScanner();
    const chunk = new Uint8Array(1024 * 1024).fill(0x61);
    scanner.feed(bytes("\x1b]2;"));
    const before = process.memoryUsage();
    for (let k = 0; k < 64; k++) expect(scanner.feed(chunk)).toHaveLength(0);
    const after = process.memoryUsage();
    const grown = after.heapUsed - before.heapUsed + (after.arrayBuffers - before.arrayBuffers);
    expect(grown).toBeLessThan(16 * 1024 * 1024);
    expect(scanner.feed(bytes("\x07\x1b]2;next\x07"))).toEqual([{ type: "title", at: 10, title: "next" }]);
  });
});

/** A stream touching every state: modes, OSC (BEL / ST / ESC-ended), DCS, APC, UTF-8, CAN, RIS. */
const CORPUS =
  "ls\r\n\x1b[1;32mgreen\x1b[0m ✓ é\x07" +
  "\x1b[?1049h\x1b[?1;2004;1000;1006h\x1b=\x1b(B\x1b[?25l" +
  "\x1b]0;héllo wörld\x07\x1b]2;st title\x1b\\\x1b]7;file://h/a%20b\x1b\\" +
  "\x1b]9;done\x07\x1b]9;4;1;30\x07\x1b]777;notify;T;B\x07\x1b]133;D;0\x1b\\\x1b]8;;http://x\x07link\x1b]8;;\x07" +
  "\x1bPq#0;2;0;0;0\x07\x1b\\\x1b_Gf=1\x1b\\\x1b[?20\x1831h\x1b[?2031h\x1b]2;cut\x1b[?2031l\x1b[!p" +
  "\x1bc\x1b[?2004h" +
  `${"long plain text ".repeat(8)}\x07${"more text ✓ ".repeat(6)}\x1b]2;after long text\x07`;

describe("TerminalScanner split invariance", () => {
  const whole = bytes(CORPUS);
  const reference = outcome([whole]);

  it("the corpus exercises every kind of event", () => {
    expect(new Set(reference.events.map((e) => e.type))).toEqual(
      new Set(["bell", "mode", "title", "cwd", "notify", "osc"]),
    );
  });

  it("gives the same result when split at any byte boundary", () => {
    for (let k = 0; k <= whole.length; k++) {
      expect(outcome([whole.subarray(0, k), whole.subarray(k)]), `split at ${k}`).toEqual(reference);
    }
  });

  it("gives the same result fed one byte at a time", () => {
    const singles = Array.from(whole, (b) => Uint8Array.of(b));
    expect(outcome(singles)).toEqual(reference);
  });

  it("never throws on random bytes, and random splits never change the outcome", () => {
    const alphabet = [0x1b, 0x07, 0x18, 0x5b, 0x5d, 0x5c, 0x3f, 0x3b, 0x3a, 0x21, 0x68, 0x6c, 0x70, 0x63, 0x3d,
      0x50, 0x5f, 0x30, 0x31, 0x32, 0x34, 0x39, 0x61, 0xc3, 0xa9, 0x9b, 0x9c];
    const byte = fc.oneof(fc.constantFrom(...alphabet), fc.integer({ min: 0, max: 255 }));
    fc.assert(
      fc.property(fc.array(byte, { maxLength: 300 }), fc.array(fc.nat(), { maxLength: 6 }), (list, cuts) => {
        const data = Uint8Array.from(list);
        const points = [...new Set(cuts.map((c) => c % (data.length + 1)))].sort((a, b) => a - b);
        const chunks: Uint8Array[] = [];
        let prev = 0;
        for (const p of points) {
          chunks.push(data.subarray(prev, p));
          prev = p;
        }
        chunks.push(data.subarray(prev));
        expect(outcome(chunks)).toEqual(outcome([data]));
      }),
      { numRuns: 2000 },
    );
  });
});
