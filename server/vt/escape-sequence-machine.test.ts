import { describe, expect, it } from "vitest";
import { EscapeSequenceMachine, MAX_CSI_PARAMS } from "./escape-sequence-machine.ts";

const latin1 = (s: string): Uint8Array => Uint8Array.from(s, (c) => c.charCodeAt(0));
const text = (b: Uint8Array): string => String.fromCharCode(...b);

/** Records every hook call with offsets made absolute (offset in the whole stream), and where the sequence began. */
class RecordingMachine extends EscapeSequenceMachine {
  readonly log: string[] = [];
  private base = 0;

  constructor(payloadBytes = 64, collectDcs = true) {
    super({ payloadBytes, collectDcs });
  }

  feed(chunk: Uint8Array): void {
    this.run(chunk);
    this.base += chunk.length;
  }

  private start(): string {
    return this.sequenceStart === -1 ? "earlier" : String(this.base + this.sequenceStart);
  }

  protected override bell(at: number): void {
    this.log.push(`bell@${this.base + at}`);
  }
  protected override escDispatch(final: number, at: number): void {
    this.log.push(`esc ${String.fromCharCode(final)}@${this.base + at}`);
  }
  protected override csiWantsParams(prefix: number): boolean {
    return prefix !== 0x3c; // `<` CSIs are skipped unparsed, to show the difference
  }
  protected override csiDispatch(final: number, at: number): void {
    const prefix = this.prefix ? String.fromCharCode(this.prefix) : "";
    const intermediate = this.intermediate === 0 ? "" : this.intermediate === -1 ? "(many)" : String.fromCharCode(this.intermediate);
    const params = this.params.slice(0, this.paramIndex + 1).join(";");
    const flags = `${this.csiInvalid ? " invalid" : ""}${this.csiOverflow ? " overflow" : ""}`;
    this.log.push(`csi ${prefix}${params}${intermediate}${String.fromCharCode(final)}${flags}@${this.base + at} from ${this.start()}`);
  }
  protected override oscWanted(code: number): boolean {
    return code !== 99;
  }
  protected override oscEnd(end: number, st: boolean): void {
    this.log.push(`osc ${this.oscCode} ${JSON.stringify(text(this.collected()))} ${st ? "ESC" : "BEL"}@${this.base + end} from ${this.start()}`);
  }
  protected override dcsEnd(end: number): void {
    this.log.push(`dcs ${JSON.stringify(text(this.collected()))} ESC@${this.base + end} from ${this.start()}`);
  }
  protected override stringTerminated(at: number): void {
    this.log.push(`st@${this.base + at}`);
  }
}

function whole(stream: string, machine = new RecordingMachine()): string[] {
  machine.feed(latin1(stream));
  return machine.log;
}

/** The log with the stream cut into the given pieces; "from earlier" marks a sequence begun in a previous piece. */
function pieces(parts: string[], machine = new RecordingMachine()): string[] {
  for (const part of parts) machine.feed(latin1(part));
  return machine.log;
}

/** The log of a stream split at `cut`, with sequences that straddle the cut read as begun earlier. */
function splitAt(stream: string, cut: number): string[] {
  return pieces([stream.slice(0, cut), stream.slice(cut)]);
}

/**
 * A whole-stream log as a stream split at `cut` reports it: a sequence whose ESC is before the cut
 * and whose hook fires at a byte after it began "earlier". A CSI's `@` is just after its final
 * byte; an OSC's or DCS's `@` is its terminator.
 */
function asIfSplit(log: string[], cut: number): string[] {
  return log.map((entry) => {
    const m = /^(\w+) .*@(\d+) from (\d+)$/.exec(entry);
    if (!m) return entry;
    const firesAt = m[1] === "csi" ? Number(m[2]) - 1 : Number(m[2]);
    return Number(m[3]) < cut && firesAt >= cut ? entry.replace(/ from \d+$/, " from earlier") : entry;
  });
}

const VECTORS: Record<string, string> = {
  "CSI with prefix, parameters and one intermediate": "a\x1b[?1;2004hb\x1b[4$pc\x1b[>4;2m",
  "CSI with several intermediates": "\x1b[1 !p",
  "CSI with sub-parameters and empty parameters": "\x1b[38:2:1:2:3;;5m",
  "CSI with a prefix byte out of place, and a byte ≥ 0x80": "\x1b[1?h\x1b[?1\xc3h",
  "CSI with a parameter after an intermediate": "\x1b[?$1p",
  "CSI with a `<` prefix (parameters not wanted)": "\x1b[<5u",
  "C0 controls executed inside ESC and CSI": "\x1b\x07[\x076\x0an",
  "CAN and SUB abort sequences": "\x1b[12\x18n\x1b]0;t\x1a\x07\x1bP$q\x18\x1b\\",
  "ESC inside CSI starts a new sequence": "\x1b[12\x1b[6n",
  "OSC ended by BEL and by ST": "\x1b]0;title\x07\x1b]7;file:///tmp\x1b\\",
  "OSC without payload, and one not wanted": "\x1b]11\x07\x1b]99;skipped\x07\x1b]11;?\x07",
  "OSC ended by an ESC that begins a new sequence": "\x1b]2;t\x1b[5n",
  "OSC payload over the limit is skipped": `\x1b]0;${"x".repeat(70)}\x07\x1b]0;ok\x07`,
  "OSC ignores C0 controls in its payload": "\x1b]0;a\x0ab\x07",
  "DCS collected to its ST, BEL does not end it": "\x1bP$qm\x07x\x1b\\\x1bP+q544e;636f\x1b\\",
  "SOS, PM and APC skipped to their ST": "\x1bXsos\x1b\\\x1b^pm\x07\x1b\\\x1b_apc\x1b\\",
  "ESC with intermediates, RIS and keypad modes": "\x1b(B\x1b#8\x1bc\x1b=\x1b>",
  "bells in text and a lone ESC at the end": "a\x07b\x07\x1b",
  "long text before a sequence (past the ground probe)": `${"t".repeat(100)}\x07${"u".repeat(40)}\x1b[m`,
};

describe("EscapeSequenceMachine vectors", () => {
  it("reads each vector as a terminal would", () => {
    const logs = Object.fromEntries(Object.entries(VECTORS).map(([name, stream]) => [name, whole(stream)]));
    expect(logs).toEqual({
      "CSI with prefix, parameters and one intermediate": ["csi ?1;2004h@11 from 1", "csi 4$p@17 from 12", "csi >4;2m@25 from 18"],
      "CSI with several intermediates": ["csi 1(many)p@6 from 0"],
      "CSI with sub-parameters and empty parameters": ["csi 38;0;5m@16 from 0"],
      "CSI with a prefix byte out of place, and a byte ≥ 0x80": ["csi 1h invalid@5 from 0", "csi ?1h invalid@11 from 5"],
      "CSI with a parameter after an intermediate": ["csi ?0$p invalid@6 from 0"],
      "CSI with a `<` prefix (parameters not wanted)": ["csi <0u@5 from 0"],
      "C0 controls executed inside ESC and CSI": ["bell@2", "bell@4", "csi 6n@7 from 0"],
      "CAN and SUB abort sequences": ["bell@13", "esc \\@20"], // the BEL after an aborted OSC is text; so is the ST after an aborted DCS
      "ESC inside CSI starts a new sequence": ["csi 6n@8 from 4"],
      "OSC ended by BEL and by ST": ['osc 0 "title" BEL@9 from 0', 'osc 7 "file:///tmp" ESC@25 from 10', "st@27"],
      "OSC without payload, and one not wanted": ['osc 11 "?" BEL@24 from 18'],
      "OSC ended by an ESC that begins a new sequence": ['osc 2 "t" ESC@5 from 0', "st@6", "csi 5n@9 from 5"],
      "OSC payload over the limit is skipped": ['osc 0 "ok" BEL@81 from 75'],
      "OSC ignores C0 controls in its payload": ['osc 0 "ab" BEL@7 from 0'],
      "DCS collected to its ST, BEL does not end it": ['dcs "$qmx" ESC@7 from 0', "st@9", 'dcs "+q544e;636f" ESC@22 from 9', "st@24"],
      "SOS, PM and APC skipped to their ST": ["st@7", "st@14", "st@21"],
      "ESC with intermediates, RIS and keypad modes": ["esc c@8", "esc =@10", "esc >@12"],
      "bells in text and a lone ESC at the end": ["bell@2", "bell@4"],
      "long text before a sequence (past the ground probe)": ["bell@101", "csi 0m@144 from 141"],
    });
  });

  it("keeps at most MAX_CSI_PARAMS parameters and clamps their values", () => {
    const many = Array.from({ length: MAX_CSI_PARAMS + 3 }, (_, k) => k + 1).join(";");
    const [entry] = whole(`\x1b[?${many}h`);
    expect(entry).toBe(`csi ?${Array.from({ length: MAX_CSI_PARAMS }, (_, k) => k + 1).join(";")}h overflow@${many.length + 4} from 0`);
    expect(whole("\x1b[?123456789h")).toEqual(["csi ?99999h@13 from 0"]);
  });

  it("skips DCS like APC when DCS is not collected", () => {
    expect(whole("\x1bP$qm\x1b\\\x1b[c", new RecordingMachine(64, false))).toEqual(["st@7", "csi 0c@10 from 7"]);
  });

  for (const [name, stream] of Object.entries(VECTORS)) {
    it(`reads "${name}" the same split at every byte boundary`, () => {
      const log = whole(stream);
      for (let cut = 0; cut <= stream.length; cut++) expect(splitAt(stream, cut), `cut at ${cut}`).toEqual(asIfSplit(log, cut));
      // one byte a chunk: every sequence began in an earlier chunk than the byte that ends it
      expect(pieces([...stream])).toEqual(log.map((entry) => entry.replace(/ from \d+$/, " from earlier")));
    });
  }
});
