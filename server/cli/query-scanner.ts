/**
 * Watches what the CLI writes to the local terminal (the program's output, replays, its own
 * queries) for device queries: each one means the local terminal will probably answer on stdin,
 * and InputRouter needs to know that answer is coming to tell it from a keystroke.
 *
 * It also tracks the keyboard protocols a program can switch on in the local terminal that
 * TerminalScanner's DEC modes do not cover (kitty keyboard flags, xterm modifyOtherKeys), so that
 * detaching can switch them off again.
 *
 * It runs on the shared escape-sequence state machine (../vt/escape-sequence-machine.ts: raw
 * bytes, sequences split across chunks at any byte), which reads the stream as the local terminal does.
 *
 * `strip` is for replayed bytes: it cuts the queries out, so the local terminal never answers them
 * (docs/design.md, Device queries and auto-replies).
 */
import { EscapeSequenceMachine } from "../vt/escape-sequence-machine.ts";

/** The kind of answer a query asks for, one per reply shape InputRouter recognises. */
export type ReplyKind =
  | "cpr" // CSI 6 n / CSI ? 6 n → CSI r ; c R / CSI ? r ; c ; p R
  | "status" // CSI 5 n → CSI 0 n
  | "dsr" // CSI ? Ps n (other private status reports) → CSI ? … n
  | "scheme" // CSI ? 996 n → CSI ? 997 ; 1|2 n
  | "da1" // CSI c → CSI ? … c
  | "da2" // CSI > c → CSI > … c
  | "da3" // CSI = c → DCS ! | … ST
  | "decrqm" // CSI ? Ps $ p → CSI ? Ps ; Pm $ y
  | "winops" // CSI 14 t, 18 t, … → CSI 4 ; h ; w t, …
  | "xtversion" // CSI > q → DCS > | … ST
  | "kitty" // CSI ? u → CSI ? flags u
  | "decrqss" // DCS $ q … ST → DCS 1 $ r … ST
  | "xtgettcap" // DCS + q … ST → DCS 1 + r … ST
  | `osc${number}`; // OSC N ; ? ST → OSC N ; … ST

/** OSC and DCS payloads are looked at up to this length; queries are short, longer strings are data (an OSC 52 copy). */
export const MAX_QUERY_SEQUENCE_BYTES = 256;
/** Kitty keyboard pushes beyond this are not counted: the protocol's own stack is that deep at most in practice. */
const MAX_KITTY_PUSHES = 64;

/** xterm's window reports that answer with `CSI … t` (20 and 21 answer with OSC, and are off by default). */
const WINDOW_REPORT_QUERIES = new Set([11, 13, 14, 15, 16, 18, 19]);


export class QueryScanner extends EscapeSequenceMachine {
  /** replies found in the chunk being scanned */
  private found: ReplyKind[] = [];
  /** with strip: the queries wholly inside the chunk being scanned, cut instead of reported */
  private cuts: [number, number][] | null = null;
  /** kitty keyboard flags pushed (`CSI > flags u`) and not popped */
  kittyPushes = 0;
  /** xterm modifyOtherKeys level set by `CSI > 4 ; n m` */
  modifyOtherKeys = 0;

  constructor() {
    super({ payloadBytes: MAX_QUERY_SEQUENCE_BYTES, collectDcs: true });
  }

  /** Scan a chunk; returns the replies the local terminal owes for the queries in it, in order. */
  feed(chunk: Uint8Array): ReplyKind[] {
    return this.scan(chunk, null);
  }

  /**
   * Scan a chunk and return it without the queries in it. A query that began in an earlier chunk
   * (already written) cannot be cut: its reply is in `owed`, like feed's.
   */
  strip(chunk: Uint8Array): { output: Uint8Array; owed: ReplyKind[] } {
    const cuts: [number, number][] = [];
    const owed = this.scan(chunk, cuts);
    if (cuts.length === 0) return { output: chunk, owed };
    const output = new Uint8Array(chunk.length - cuts.reduce((sum, [from, to]) => sum + to - from, 0));
    let at = 0;
    let kept = 0;
    for (const [from, to] of cuts) {
      output.set(chunk.subarray(kept, from), at);
      at += from - kept;
      kept = to;
    }
    output.set(chunk.subarray(kept), at);
    return { output, owed };
  }

  private scan(chunk: Uint8Array, cuts: [number, number][] | null): ReplyKind[] {
    const found: ReplyKind[] = (this.found = []);
    this.cuts = cuts;
    this.run(chunk);
    this.found = [];
    this.cuts = null;
    return found;
  }

  /** A sequence ended at `end` (exclusive) after `before` replies were found: with strip, cut it if it was a query. */
  private ended(before: number, end: number): void {
    if (!this.cuts || this.found.length === before || this.sequenceStart === -1) return;
    this.found.length = before;
    this.cuts.push([this.sequenceStart, end]);
  }

  protected override csiDispatch(final: number, at: number): void {
    if (this.csiInvalid || this.csiOverflow) return;
    const before = this.found.length;
    this.dispatchCsi(final);
    this.ended(before, at);
  }

  protected override oscWanted(): boolean {
    return true;
  }

  // An ST's ESC stays: a lone `ESC \` is nothing to a terminal, and the ESC may begin something else.
  protected override oscEnd(end: number, st: boolean): void {
    const before = this.found.length;
    this.dispatchOsc(latin1(this.collected()));
    this.ended(before, st ? end : end + 1);
  }

  protected override dcsEnd(end: number): void {
    const before = this.found.length;
    this.dispatchDcs(latin1(this.collected()));
    this.ended(before, end);
  }

  private dispatchCsi(finalByte: number): void {
    const found = this.found;
    const params = this.params;
    const count = this.paramIndex + 1;
    const first = params[0]!;
    /** one parameter, this one (an empty parameter is 0) */
    const only = (value: number) => count === 1 && first === value;
    const noParams = only(0);
    const prefix = this.prefix === 0 ? "" : String.fromCharCode(this.prefix);
    const intermediate = this.intermediate <= 0 ? (this.intermediate === 0 ? "" : "??") : String.fromCharCode(this.intermediate);
    const key = `${prefix}${String.fromCharCode(finalByte)}${intermediate}`;
    switch (key) {
      case "n":
        if (only(6)) found.push("cpr");
        else if (only(5)) found.push("status");
        return;
      case "?n":
        found.push(only(6) ? "cpr" : only(996) ? "scheme" : "dsr");
        return;
      case "c":
        if (noParams) found.push("da1");
        return;
      case ">c":
        if (noParams) found.push("da2");
        return;
      case "=c":
        if (noParams) found.push("da3");
        return;
      case "p$":
      case "?p$":
        found.push("decrqm");
        return;
      case "t":
        if (WINDOW_REPORT_QUERIES.has(first)) found.push("winops");
        return;
      case ">q":
        if (noParams) found.push("xtversion");
        return;
      case "?u":
        found.push("kitty");
        return;
      case ">u":
        this.kittyPushes = Math.min(MAX_KITTY_PUSHES, this.kittyPushes + 1);
        return;
      case "<u":
        this.kittyPushes = Math.max(0, this.kittyPushes - (first || 1));
        return;
      case ">m":
        if (first === 4) this.modifyOtherKeys = count > 1 ? params[1]! : 0;
        return;
    }
  }

  /** `payload` is what follows `OSC code ;`. */
  private dispatchOsc(payload: string): void {
    const code = this.oscCode;
    const fields = payload.split(";");
    for (let f = 0; f < fields.length; f++) {
      if (fields[f] !== "?") continue;
      // OSC 10;?;? asks for colours 10 and 11: each further field is the next dynamic colour.
      const asked = code >= 10 && code <= 19 ? code + f : code;
      this.found.push(`osc${asked}`);
    }
  }

  private dispatchDcs(text: string): void {
    if (text.startsWith("$q")) this.found.push("decrqss");
    else if (text.startsWith("+q")) {
      // one answer per capability name asked for
      for (const name of text.slice(2).split(";")) if (name) this.found.push("xtgettcap");
    }
  }
}

function latin1(bytes: Uint8Array): string {
  return String.fromCharCode(...bytes);
}
