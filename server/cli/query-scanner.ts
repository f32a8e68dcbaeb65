/**
 * Watches what the CLI writes to the local terminal (the program's output, replays, its own
 * queries) for device queries: each one means the local terminal will probably answer on stdin,
 * and InputRouter needs to know that answer is coming to tell it from a keystroke.
 *
 * It also tracks the keyboard protocols a program can switch on in the local terminal that
 * TerminalScanner's DEC modes do not cover (kitty keyboard flags, xterm modifyOtherKeys), so that
 * detaching can switch them off again.
 *
 * A small VT state machine on raw bytes; sequences may be split across chunks at any byte.
 *
 * `strip` is for replayed bytes: it cuts the queries out, so the local terminal never answers them
 * (docs/design.md, Device queries and auto-replies).
 */
import { BEL, CAN, ESC, SUB } from "../vt/control-bytes.ts";

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

/** Parameters and payloads are looked at up to this length; queries are short, longer sequences are data (an OSC 52 copy). */
export const MAX_QUERY_SEQUENCE_BYTES = 256;
/** Kitty keyboard pushes beyond this are not counted: the protocol's own stack is that deep at most in practice. */
const MAX_KITTY_PUSHES = 64;

/** xterm's window reports that answer with `CSI … t` (20 and 21 answer with OSC, and are off by default). */
const WINDOW_REPORT_QUERIES = new Set([11, 13, 14, 15, 16, 18, 19]);


const GROUND = 0;
const ESCAPE = 1;
const CSI = 2;
const OSC = 3;
const DCS = 4;

export class QueryScanner {
  private state = GROUND;
  private collected = "";
  private intermediates = "";
  private overflow = false;
  /** where the sequence being read began in the current chunk; -1 when it began in an earlier one */
  private sequenceStart = -1;
  /** kitty keyboard flags pushed (`CSI > flags u`) and not popped */
  kittyPushes = 0;
  /** xterm modifyOtherKeys level set by `CSI > 4 ; n m` */
  modifyOtherKeys = 0;

  /** Scan a chunk; returns the replies the local terminal owes for the queries in it, in order. */
  feed(chunk: Uint8Array): ReplyKind[] {
    const found: ReplyKind[] = [];
    this.scan(chunk, found, null);
    return found;
  }

  /**
   * Scan a chunk and return it without the queries in it. A query that began in an earlier chunk
   * (already written) cannot be cut: its reply is in `owed`, like feed's.
   */
  strip(chunk: Uint8Array): { output: Uint8Array; owed: ReplyKind[] } {
    const owed: ReplyKind[] = [];
    const cuts: [number, number][] = [];
    this.scan(chunk, owed, cuts);
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

  /** The state machine; with `cuts`, each query wholly inside the chunk is cut instead of reported. */
  private scan(chunk: Uint8Array, found: ReplyKind[], cuts: [number, number][] | null): void {
    this.sequenceStart = -1;
    /** a sequence that ended at `end` (exclusive): cut it if it was a query */
    const ended = (before: number, end: number) => {
      if (!cuts || found.length === before || this.sequenceStart === -1) return;
      found.length = before;
      cuts.push([this.sequenceStart, end]);
    };
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i]!;
      if (this.state === GROUND) {
        // Skip text fast: nothing but ESC starts a query.
        const next = chunk.indexOf(ESC, i);
        if (next === -1) break;
        i = next;
        this.state = ESCAPE;
        this.sequenceStart = i;
        continue;
      }
      if (byte === CAN || byte === SUB) {
        this.state = GROUND;
        continue;
      }
      switch (this.state) {
        case ESCAPE:
          this.begin(byte === 0x5b ? CSI : byte === 0x5d ? OSC : byte === 0x50 ? DCS : byte === ESC ? ESCAPE : GROUND, i);
          break;
        case CSI:
          if (byte >= 0x30 && byte <= 0x3f) this.collect(byte);
          else if (byte >= 0x20 && byte <= 0x2f) this.intermediates += String.fromCharCode(byte);
          else if (byte >= 0x40 && byte <= 0x7e) {
            const before = found.length;
            if (!this.overflow) this.dispatchCsi(String.fromCharCode(byte), found);
            ended(before, i + 1);
            this.state = GROUND;
          } else if (byte === ESC) this.begin(ESCAPE, i);
          // other C0 controls inside CSI are executed by the terminal and do not end it
          break;
        case OSC:
          if (byte === BEL || byte === ESC) {
            const before = found.length;
            if (!this.overflow) this.dispatchOsc(found);
            // An ST's ESC stays: a lone `ESC \` is nothing to a terminal, and the ESC may begin something else.
            ended(before, byte === BEL ? i + 1 : i);
            if (byte === ESC) this.begin(ESCAPE, i);
            else this.begin(GROUND);
          } else this.collect(byte);
          break;
        case DCS:
          if (byte === ESC) {
            const before = found.length;
            if (!this.overflow) this.dispatchDcs(found);
            ended(before, i);
            this.begin(ESCAPE, i);
          } else this.collect(byte);
          break;
      }
    }
  }

  private begin(state: number, at = -1): void {
    if (state === ESCAPE) this.sequenceStart = at;
    this.state = state;
    this.collected = "";
    this.intermediates = "";
    this.overflow = false;
  }

  private collect(byte: number): void {
    if (this.collected.length >= MAX_QUERY_SEQUENCE_BYTES) this.overflow = true;
    else this.collected += String.fromCharCode(byte);
  }

  private dispatchCsi(final: string, found: ReplyKind[]): void {
    const text = this.collected;
    const prefix = /^[<=>?]/.test(text) ? text[0]! : "";
    const params = prefix ? text.slice(1) : text;
    const first = params.split(";")[0]!;
    const noParams = params === "" || params === "0";
    const key = `${prefix}${final}${this.intermediates}`;
    switch (key) {
      case "n":
        if (params === "6") found.push("cpr");
        else if (params === "5") found.push("status");
        return;
      case "?n":
        found.push(params === "6" ? "cpr" : params === "996" ? "scheme" : "dsr");
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
        if (WINDOW_REPORT_QUERIES.has(Number(first))) found.push("winops");
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
        this.kittyPushes = Math.max(0, this.kittyPushes - (Number(first) || 1));
        return;
      case ">m":
        if (first === "4") this.modifyOtherKeys = Number(params.split(";")[1] ?? 0) || 0;
        return;
    }
  }

  private dispatchOsc(found: ReplyKind[]): void {
    const fields = this.collected.split(";");
    const code = Number(fields[0]);
    if (!/^\d+$/.test(fields[0]!)) return;
    for (let f = 1; f < fields.length; f++) {
      if (fields[f] !== "?") continue;
      // OSC 10;?;? asks for colours 10 and 11: each further field is the next dynamic colour.
      const asked = code >= 10 && code <= 19 ? code + f - 1 : code;
      found.push(`osc${asked}`);
    }
  }

  private dispatchDcs(found: ReplyKind[]): void {
    const text = this.collected;
    if (text.startsWith("$q")) found.push("decrqss");
    else if (text.startsWith("+q")) {
      // one answer per capability name asked for
      for (const name of text.slice(2).split(";")) if (name) found.push("xtgettcap");
    }
  }
}
