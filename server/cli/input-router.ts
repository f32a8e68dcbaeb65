/**
 * Splits what arrives on stdin into keystrokes (0x00: they take control), replies of the local
 * terminal to device queries (0x06: auto-replies, never take control), answers to the CLI's own
 * queries (handled locally, never sent), and the detach key.
 *
 * The rule that tells a reply from a keystroke, whose bytes alike cannot tell (Shift+F3 and a
 * cursor position report are both `ESC [ 1 ; 2 R`; docs/design.md § Device queries and auto-replies):
 *  1. Only a complete escape sequence of a reply's shape can be a reply: `CSI … R` (CPR),
 *     `CSI ? … c` / `CSI > … c` (DA), `CSI … $ y` (DECRQM), `CSI 0 n`, `CSI ? … n` (incl.
 *     `CSI ? 997 ; n n`), `CSI ? … u`, `CSI <digits> t`, any `OSC N ; …`, `DCS !|`, `DCS >|`,
 *     `DCS 1$r`, `DCS 1+r`. Everything else (text, arrows, function keys) is a keystroke.
 *  2. A reply-shaped sequence answers the oldest unanswered query of its kind written to the local
 *     terminal in the last REPLY_WINDOW_MS (QueryScanner saw it; the CLI's own queries wait up to
 *     LOCAL_REPLY_WINDOW_MS); whoever wrote that query owns it:
 *     the program (forwarded as 0x06), a replayed snapshot (dropped: that query was answered long
 *     ago), or the CLI itself (consumed).
 *  3. With no such query outstanding, a reply shape no key produces is still a late or unsolicited
 *     reply (0x06); but `CSI 1 ; m R`, which is also modified F3, is a keystroke.
 */
import type { ReplyKind } from "./query-scanner.ts";
import type { DetachKey } from "./detach-key.ts";

/** A terminal answers a query within milliseconds locally and well within this over a slow SSH link. */
export const REPLY_WINDOW_MS = 2_000;
/**
 * The CLI's own queries wait longer: their answers must never reach the program (docs/design.md
 * § Device queries and auto-replies), and each
 * is followed by a DA1 sentinel whose answer settles it (dropLocal) however slow the link is.
 */
export const LOCAL_REPLY_WINDOW_MS = 60_000;
/** A part of a possible reply at the end of a read waits this long for its rest before it counts as typed. */
export const HELD_SEQUENCE_MS = 50;
/** Outstanding queries kept at most: a program spamming queries the terminal ignores cannot grow memory. */
export const MAX_OUTSTANDING_QUERIES = 256;
/** An OSC or DCS on stdin longer than this without its terminator is not a reply (a paste). */
const MAX_REPLY_BYTES = 4096;

export type QueryOwner = "program" | "replay" | "local";

type Expectation = {
  kind: ReplyKind;
  owner: QueryOwner;
  expiresAt: number;
  onReply?: (reply: Uint8Array) => void;
};

export type InputAction =
  | { kind: "input"; data: Uint8Array }
  | { kind: "reply"; data: Uint8Array }
  | { kind: "local"; data: Uint8Array; onReply: (reply: Uint8Array) => void }
  | { kind: "detach" };

const ESC = 0x1b;
const BEL = 0x07;

type Token = { end: number; complete: boolean };

export class InputRouter {
  private expectations: Expectation[] = [];
  private held: Uint8Array | null = null;

  constructor(
    private readonly detachKey: DetachKey | null,
    private readonly now: () => number = Date.now,
  ) {}

  /** A query was written to the local terminal; its answer will come on stdin. */
  expect(kind: ReplyKind, owner: QueryOwner, onReply?: (reply: Uint8Array) => void): void {
    if (this.expectations.length >= MAX_OUTSTANDING_QUERIES) this.expectations.shift();
    const window = owner === "local" ? LOCAL_REPLY_WINDOW_MS : REPLY_WINDOW_MS;
    this.expectations.push({ kind, owner, expiresAt: this.now() + window, ...(onReply ? { onReply } : {}) });
  }

  /** Forget the CLI's own queries written before now (the terminal skipped them: a later one was answered). */
  dropLocal(kind: ReplyKind): void {
    this.expectations = this.expectations.filter((e) => !(e.owner === "local" && e.kind === kind));
  }

  /** True while a part of a sequence waits for more bytes; call flushHeld after HELD_SEQUENCE_MS. */
  get holding(): boolean {
    return this.held !== null;
  }

  /** The held bytes did not become a reply in time: they were typed (a lone Esc, Alt+[). */
  flushHeld(): InputAction[] {
    const held = this.held;
    this.held = null;
    if (!held) return [];
    const actions: InputAction[] = [];
    this.emitInput(actions, held);
    return actions;
  }

  route(chunk: Uint8Array): InputAction[] {
    let data = chunk;
    if (this.held) {
      data = new Uint8Array(this.held.length + chunk.length);
      data.set(this.held);
      data.set(chunk, this.held.length);
      this.held = null;
    }
    this.prune();
    const actions: InputAction[] = [];
    let plainStart = 0;
    let i = 0;
    while (i < data.length) {
      if (data[i] !== ESC) {
        i++;
        continue;
      }
      const token = scanSequence(data, i);
      if (!token.complete) {
        // Hold a possible reply's beginning only while one is expected: otherwise Esc is typed at once.
        if (this.expectations.length > 0 && data.length - i < MAX_REPLY_BYTES) {
          if (!this.emitInput(actions, data.subarray(plainStart, i))) return actions;
          this.held = data.slice(i);
          return actions;
        }
        break;
      }
      const sequence = data.subarray(i, token.end);
      const kind = replyKind(sequence);
      if (kind !== null) {
        const routed = this.routeReply(kind, sequence);
        if (routed) {
          if (!this.emitInput(actions, data.subarray(plainStart, i))) return actions;
          if (routed !== "drop") actions.push(routed);
          plainStart = token.end;
        }
      }
      i = token.end;
    }
    this.emitInput(actions, data.subarray(plainStart));
    return actions;
  }

  private routeReply(kind: ReplyKind | "cpr-or-key", sequence: Uint8Array): InputAction | "drop" | null {
    const wanted = kind === "cpr-or-key" ? "cpr" : kind;
    const at = this.expectations.findIndex((e) => e.kind === wanted);
    if (at === -1) return kind === "cpr-or-key" ? null : { kind: "reply", data: sequence.slice() };
    const [expectation] = this.expectations.splice(at, 1);
    if (expectation!.owner === "replay") return "drop";
    if (expectation!.owner === "local") return { kind: "local", data: sequence.slice(), onReply: expectation!.onReply ?? (() => {}) };
    return { kind: "reply", data: sequence.slice() };
  }

  /** Typed bytes, cut at the detach key; false once the detach key was seen (the rest is dropped). */
  private emitInput(actions: InputAction[], bytes: Uint8Array): boolean {
    if (bytes.length === 0) return true;
    const cut = this.detachKey ? this.detachKey.find(bytes) : -1;
    const typed = cut === -1 ? bytes : bytes.subarray(0, cut);
    if (typed.length) {
      const last = actions.at(-1);
      if (last?.kind === "input") {
        const merged = new Uint8Array(last.data.length + typed.length);
        merged.set(last.data);
        merged.set(typed, last.data.length);
        last.data = merged;
      } else actions.push({ kind: "input", data: typed.slice() });
    }
    if (cut === -1) return true;
    actions.push({ kind: "detach" });
    this.held = null;
    return false;
  }

  private prune(): void {
    const now = this.now();
    if (this.expectations.some((e) => e.expiresAt <= now)) this.expectations = this.expectations.filter((e) => e.expiresAt > now);
  }
}

/** The extent of the escape sequence at `start` (data[start] is ESC). */
function scanSequence(data: Uint8Array, start: number): Token {
  if (start + 1 >= data.length) return { end: data.length, complete: false };
  const intro = data[start + 1]!;
  if (intro === 0x5b) {
    for (let j = start + 2; j < data.length; j++) {
      const b = data[j]!;
      if (b >= 0x40 && b <= 0x7e) return { end: j + 1, complete: true };
      if (b < 0x20 || b > 0x7e) return { end: j, complete: true }; // not a CSI after all: keystrokes
    }
    return { end: data.length, complete: false };
  }
  if (intro === 0x5d || intro === 0x50) {
    for (let j = start + 2; j < data.length; j++) {
      const b = data[j]!;
      if (intro === 0x5d && b === BEL) return { end: j + 1, complete: true };
      if (b === ESC) {
        if (j + 1 >= data.length) return { end: data.length, complete: false };
        return { end: data[j + 1] === 0x5c ? j + 2 : j, complete: true };
      }
    }
    return { end: data.length, complete: false };
  }
  return { end: start + 2, complete: true }; // ESC + a key: Alt+key
}

const CSI_PATTERN = /^\x1b\[([<=>?]?)([0-9;:]*)([ -/]*)([@-~])$/;

/** The reply kind a complete sequence has the shape of; "cpr-or-key" for `CSI 1 ; m R`; null for a keystroke. */
export function replyKind(sequence: Uint8Array): ReplyKind | "cpr-or-key" | null {
  const text = String.fromCharCode(...sequence.subarray(0, Math.min(sequence.length, 64)));
  if (text.startsWith("\x1b]")) {
    const code = /^\x1b\](\d+)[;\x07\x1b]/.exec(text);
    return code ? `osc${Number(code[1])}` : null;
  }
  if (text.startsWith("\x1bP")) {
    if (text.startsWith("\x1bP!|")) return "da3";
    if (text.startsWith("\x1bP>|")) return "xtversion";
    if (/^\x1bP[01]\$r/.test(text)) return "decrqss";
    if (/^\x1bP[01]\+r/.test(text)) return "xtgettcap";
    return null;
  }
  const csi = CSI_PATTERN.exec(text);
  if (!csi) return null;
  const [, prefix, params, intermediates, final] = csi as unknown as [string, string, string, string, string];
  if (final === "R" && intermediates === "") {
    if (prefix === "?") return "cpr";
    if (prefix === "" && /^\d+;\d+$/.test(params)) return params.startsWith("1;") ? "cpr-or-key" : "cpr";
    return null;
  }
  if (final === "c" && intermediates === "") return prefix === "?" ? "da1" : prefix === ">" ? "da2" : null;
  if (final === "y" && intermediates === "$") return "decrqm";
  if (final === "n" && intermediates === "") {
    if (prefix === "" && /^[03]$/.test(params)) return "status";
    if (prefix === "?") return /^997;\d+$/.test(params) ? "scheme" : "dsr";
    return null;
  }
  if (final === "u" && prefix === "?" && intermediates === "") return "kitty";
  if (final === "t" && prefix === "" && intermediates === "" && /^\d+(;\d+)*$/.test(params)) return "winops";
  return null;
}
