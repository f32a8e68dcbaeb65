/**
 * Incremental VT scanner on the PTY output hot path. It takes raw bytes (never
 * decodes output), survives sequences split at any byte boundary, tracks the modes a
 * snapshot must restore (./terminal-modes.ts) and reports the events a session cares
 * about: title, cwd, bell, notifications, mode changes, shell-integration marks.
 *
 * Printable text is skipped with `indexOf(ESC)` / `indexOf(BEL)`. 8-bit C1 controls
 * are not recognised: the stream is UTF-8, whose continuation bytes include 0x9b.
 * State transitions follow xterm.js's parser (an ESC inside an OSC ends it, CAN and
 * SUB abort any sequence, C0 controls inside CSI are executed).
 */
import { ModeTracker } from "./terminal-modes.ts";
import type { TerminalModes } from "./terminal-modes.ts";
import { isCollectedOsc, oscEvent } from "./terminal-osc.ts";
import { BEL, CAN, ESC, SUB } from "./control-bytes.ts";

export type ScanEvent =
  | { type: "title"; at: number; title: string }
  | { type: "cwd"; at: number; cwd: string }
  | { type: "bell"; at: number }
  | { type: "notify"; at: number; title?: string; body: string }
  | { type: "mode"; at: number; mode: number; on: boolean }
  | { type: "osc"; at: number; code: number; data: string };

/** Largest OSC payload collected: an OSC 7 path of PATH_MAX (4096) percent-encoded, or a long OSC 633 command line. Longer ones are dropped, never buffered. */
export const MAX_OSC_PAYLOAD_BYTES = 8 * 1024;

/** Parameters kept per CSI sequence; xterm.js keeps 32, and mode lists are never that long. */
export const MAX_CSI_PARAMS = 32;

/** Bytes of text walked in JS before the ground state falls back to native `indexOf`: a native call costs about this much. */
const GROUND_PROBE_BYTES = 24;

/** Parameter values are clamped here: far above every tracked mode, far below integer overflow. */
const MAX_PARAM_VALUE = 99_999;

const NO_EVENTS: readonly ScanEvent[] = Object.freeze([]);


// Scanner states (plain numbers, not an enum: the server also runs under type-stripping runtimes).
const GROUND = 0;
const ESCAPE = 1;
const ESCAPE_INTERMEDIATE = 2;
const CSI = 3;
const OSC_CODE = 4;
const OSC_PAYLOAD = 5;
/** an OSC not collected (uninteresting code or over the cap): ends at BEL or ESC */
const OSC_SKIP = 6;
/** DCS, SOS, PM, APC: ends at ESC (ST) only */
const STRING_SKIP = 7;
/** the byte after an ESC that ended a string; `\` completes ST */
const STRING_ESCAPE = 8;

export class TerminalScanner {
  private readonly tracker: ModeTracker;
  private state = GROUND;
  private events: ScanEvent[] | null = null;
  /** `at` of the sequence being dispatched, for mode-change events */
  private dispatchAt = 0;

  // CSI
  private readonly params = new Array<number>(MAX_CSI_PARAMS).fill(0);
  private paramIndex = 0;
  private prefix = 0;
  /** intermediate byte, 0 = none, -1 = more than one */
  private intermediate = 0;
  private csiStarted = false;
  private csiInvalid = false;
  /** digits go nowhere: inside a `:` sub-parameter, or past MAX_CSI_PARAMS */
  private csiSkipDigits = false;
  private csiOverflow = false;

  // OSC
  private oscCode = 0;
  private oscHasCode = false;
  private oscPayload: Uint8Array | null = null;
  private oscLength = 0;
  /** an OSC payload waits for the byte after its ESC terminator */
  private oscPending = false;

  constructor() {
    this.tracker = new ModeTracker((mode, on) => this.emit({ type: "mode", at: this.dispatchAt, mode, on }));
  }

  get modes(): TerminalModes {
    return this.tracker.modes;
  }

  get bracketedPaste(): boolean {
    return this.tracker.bracketedPaste;
  }

  get colorSchemeReports(): boolean {
    return this.tracker.colorSchemeReports;
  }

  get alternateScreen(): boolean {
    return this.tracker.alternateScreen;
  }

  /** The modes-only snapshot: bytes that bring a freshly reset xterm to the tracked modes. */
  restoreSequence(): string {
    return this.tracker.restoreSequence();
  }

  /** A fresh terminal (new generation), reporting nothing. */
  reset(): void {
    this.tracker.clear();
    this.state = GROUND;
    this.oscPending = false;
  }

  /** Scan one chunk of output. Returns a shared empty array when nothing happened. */
  feed(chunk: Uint8Array): readonly ScanEvent[] {
    const n = chunk.length;
    let nextEsc = -1;
    let nextBel = -1;
    let i = 0;
    while (i < n) {
      if (this.state === GROUND) {
        // Short gaps (TUI redraws: a few cells between SGRs) are cheaper to walk than to search natively.
        const probeEnd = i + GROUND_PROBE_BYTES < n ? i + GROUND_PROBE_BYTES : n;
        let j = i;
        while (j < probeEnd && chunk[j] !== ESC && chunk[j] !== BEL) j++;
        if (j < probeEnd) {
          if (chunk[j] === BEL) this.emit({ type: "bell", at: j + 1 });
          else this.state = ESCAPE;
          i = j + 1;
          continue;
        }
        if (nextEsc < probeEnd) nextEsc = indexOrEnd(chunk, ESC, probeEnd);
        if (nextBel < probeEnd) nextBel = indexOrEnd(chunk, BEL, probeEnd);
        if (nextBel < nextEsc) {
          this.emit({ type: "bell", at: nextBel + 1 });
          i = nextBel + 1;
        } else if (nextEsc < n) {
          this.state = ESCAPE;
          i = nextEsc + 1;
        } else {
          break;
        }
        continue;
      }
      switch (this.state) {
        case ESCAPE:
          this.escape(chunk[i], i);
          i++;
          break;
        case ESCAPE_INTERMEDIATE:
          this.escapeIntermediate(chunk[i], i);
          i++;
          break;
        case CSI:
          i = this.csi(chunk, i);
          break;
        case OSC_CODE:
          this.oscCodeByte(chunk[i], i);
          i++;
          break;
        case OSC_PAYLOAD:
          i = this.oscPayloadBytes(chunk, i);
          break;
        case OSC_SKIP:
        case STRING_SKIP:
          i = this.skipString(chunk, i);
          break;
        case STRING_ESCAPE:
          if (this.oscPending) this.dispatchOsc(chunk[i] === 0x5c ? i + 1 : i);
          if (chunk[i] === 0x5c) {
            this.state = GROUND;
            i++;
          } else {
            this.state = ESCAPE; // the ESC starts a new sequence: reprocess this byte there
          }
          break;
      }
    }
    const events = this.events;
    if (events === null) return NO_EVENTS;
    this.events = null;
    return events;
  }

  private emit(event: ScanEvent): void {
    (this.events ??= []).push(event);
  }

  /** C0 controls that act inside escape and control sequences; true if `b` was one. */
  private control(b: number, i: number): boolean {
    if (b >= 0x20) return false;
    if (b === ESC) this.state = ESCAPE;
    else if (b === CAN || b === SUB) this.state = GROUND;
    else if (b === BEL) this.emit({ type: "bell", at: i + 1 });
    return true;
  }

  private escape(b: number, i: number): void {
    if (this.control(b, i) || b === 0x7f) return;
    this.state = GROUND;
    if (b <= 0x2f) {
      this.state = ESCAPE_INTERMEDIATE;
    } else if (b === 0x5b /* [ */) {
      this.startCsi();
    } else if (b === 0x5d /* ] */) {
      this.state = OSC_CODE;
      this.oscCode = 0;
      this.oscHasCode = false;
    } else if (b === 0x50 /* P */ || b === 0x58 /* X */ || b === 0x5e /* ^ */ || b === 0x5f /* _ */) {
      this.state = STRING_SKIP;
    } else if (b === 0x63 /* c: RIS */) {
      this.dispatchAt = i + 1;
      this.tracker.hardReset();
    } else if (b === 0x3d /* =: DECKPAM */ || b === 0x3e /* >: DECKPNM */) {
      this.dispatchAt = i + 1;
      this.tracker.setPrivateMode(66, b === 0x3d);
    }
  }

  private escapeIntermediate(b: number, i: number): void {
    if (this.control(b, i) || b === 0x7f || (b >= 0x20 && b <= 0x2f)) return;
    this.state = GROUND; // final byte (e.g. the charset of `ESC ( B`)
  }

  private startCsi(): void {
    this.state = CSI;
    this.params[0] = 0;
    this.paramIndex = 0;
    this.prefix = 0;
    this.intermediate = 0;
    this.csiStarted = false;
    this.csiInvalid = false;
    this.csiSkipDigits = false;
    this.csiOverflow = false;
  }

  private csi(chunk: Uint8Array, i: number): number {
    if (!this.csiStarted) {
      const b = chunk[i];
      if (b < 0x20) {
        this.control(b, i); // C0 before the first parameter byte: executed, still in CSI entry
        return i + 1;
      }
      this.csiStarted = true;
      if (b >= 0x3c && b <= 0x3f) {
        this.prefix = b;
        return i + 1;
      }
    }
    // Only `CSI ? Pm h/l` needs its parameters; every other CSI (mostly SGR) is skipped to its final byte.
    return this.prefix === 0x3f ? this.csiPrivate(chunk, i) : this.csiSkip(chunk, i);
  }

  private csiSkip(chunk: Uint8Array, i: number): number {
    const n = chunk.length;
    for (; i < n; i++) {
      const b = chunk[i];
      if (b >= 0x30 && b <= 0x3f) {
        if (this.intermediate !== 0 || b >= 0x3c) this.csiInvalid = true;
      } else if (b >= 0x40 && b <= 0x7e) {
        this.state = GROUND;
        if (b === 0x70 /* p */ && this.intermediate === 0x21 /* ! */ && this.prefix === 0 && !this.csiInvalid) {
          this.dispatchAt = i + 1;
          this.tracker.softReset(); // DECSTR
        }
        return i + 1;
      } else if (b >= 0x20 && b <= 0x2f) {
        this.intermediate = this.intermediate === 0 ? b : -1;
      } else if (this.control(b, i)) {
        if (this.state !== CSI) return i + 1;
      } else if (b >= 0x80) {
        this.csiInvalid = true;
      }
    }
    return i;
  }

  private csiPrivate(chunk: Uint8Array, i: number): number {
    const n = chunk.length;
    const params = this.params;
    for (; i < n; i++) {
      const b = chunk[i];
      if (b >= 0x30 && b <= 0x3f) {
        if (this.intermediate !== 0 || b >= 0x3c) {
          this.csiInvalid = true;
        } else if (b <= 0x39) {
          if (!this.csiSkipDigits) {
            const v = params[this.paramIndex] * 10 + (b - 0x30);
            params[this.paramIndex] = v > MAX_PARAM_VALUE ? MAX_PARAM_VALUE : v;
          }
        } else if (b === 0x3b /* ; */) {
          if (this.paramIndex + 1 < MAX_CSI_PARAMS) {
            params[++this.paramIndex] = 0;
            this.csiSkipDigits = false;
          } else {
            this.csiOverflow = this.csiSkipDigits = true;
          }
        } else {
          this.csiSkipDigits = true; // `:` starts a sub-parameter
        }
      } else if (b >= 0x40 && b <= 0x7e) {
        this.state = GROUND;
        if (!this.csiInvalid && this.intermediate === 0 && (b === 0x68 /* h */ || b === 0x6c /* l */)) {
          this.dispatchAt = i + 1;
          const count = this.csiOverflow ? MAX_CSI_PARAMS : this.paramIndex + 1;
          for (let k = 0; k < count; k++) this.tracker.setPrivateMode(params[k], b === 0x68);
        }
        return i + 1;
      } else if (b >= 0x20 && b <= 0x2f) {
        this.intermediate = this.intermediate === 0 ? b : -1;
      } else if (this.control(b, i)) {
        if (this.state !== CSI) return i + 1;
      } else if (b >= 0x80) {
        this.csiInvalid = true;
      }
    }
    return i;
  }

  private oscCodeByte(b: number, i: number): void {
    if (b >= 0x30 && b <= 0x39) {
      const v = this.oscCode * 10 + (b - 0x30);
      this.oscCode = v > MAX_PARAM_VALUE ? MAX_PARAM_VALUE : v;
      this.oscHasCode = true;
    } else if (b === 0x3b /* ; */) {
      if (this.oscHasCode && isCollectedOsc(this.oscCode)) {
        this.state = OSC_PAYLOAD;
        this.oscLength = 0;
        this.oscPayload ??= new Uint8Array(MAX_OSC_PAYLOAD_BYTES);
      } else {
        this.state = OSC_SKIP;
      }
    } else if (b === BEL || b === CAN || b === SUB) {
      this.state = GROUND; // an OSC without payload: nothing tracked needs one
    } else if (b === ESC) {
      this.state = STRING_ESCAPE;
    } else if (b >= 0x20) {
      this.state = OSC_SKIP;
    }
  }

  private oscPayloadBytes(chunk: Uint8Array, i: number): number {
    const n = chunk.length;
    const payload = this.oscPayload!;
    let len = this.oscLength;
    for (; i < n; i++) {
      const b = chunk[i];
      if (b >= 0x20) {
        if (len === MAX_OSC_PAYLOAD_BYTES) {
          this.state = OSC_SKIP;
          return i + 1;
        }
        payload[len++] = b;
      } else if (b === BEL) {
        this.oscLength = len;
        this.state = GROUND;
        this.dispatchOsc(i + 1);
        return i + 1;
      } else if (b === ESC) {
        this.oscLength = len;
        this.oscPending = true;
        this.state = STRING_ESCAPE;
        return i + 1;
      } else if (b === CAN || b === SUB) {
        this.state = GROUND;
        return i + 1;
      }
    }
    this.oscLength = len;
    return i;
  }

  private skipString(chunk: Uint8Array, i: number): number {
    const n = chunk.length;
    const belEnds = this.state === OSC_SKIP;
    for (; i < n; i++) {
      const b = chunk[i];
      if (b >= 0x20) continue;
      if (b === ESC) {
        this.state = STRING_ESCAPE;
        return i + 1;
      }
      if (b === CAN || b === SUB || (b === BEL && belEnds)) {
        this.state = GROUND;
        return i + 1;
      }
    }
    return i;
  }

  private dispatchOsc(at: number): void {
    this.oscPending = false;
    const event = oscEvent(this.oscCode, this.oscPayload!.subarray(0, this.oscLength), at);
    if (event !== null) this.emit(event);
  }
}

function indexOrEnd(chunk: Uint8Array, byte: number, from: number): number {
  const j = chunk.indexOf(byte, from);
  return j < 0 ? chunk.length : j;
}
