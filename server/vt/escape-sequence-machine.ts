/**
 * The one escape-sequence state machine both VT scanners run on: the session's TerminalScanner
 * (./terminal-scanner.ts) and the CLI's device-query scanner (../cli/query-scanner.ts). It walks
 * raw bytes (never decodes output), survives sequences split at any byte boundary and hands each
 * complete sequence to its subclass through the protected hooks below; what a sequence means is
 * the subclass's business.
 *
 * States and transitions follow xterm.js's parser, so that both scanners read a stream the way the
 * terminal at the other end does: C0 controls inside ESC and CSI are executed, an ESC inside an OSC
 * or DCS ends it (ST is `ESC \`, and an ESC not followed by `\` begins a new sequence), CAN and SUB
 * abort any sequence. 8-bit C1 controls are not recognised: the stream is UTF-8, whose continuation
 * bytes include 0x9b.
 *
 * Printable text is skipped with `indexOf(ESC)` / `indexOf(BEL)`: this loop is on the PTY output hot
 * path (docs/design.md, The path of an output byte).
 */
import { BEL, CAN, ESC, SUB } from "./control-bytes.ts";

/** Parameters kept per CSI sequence; xterm.js keeps 32, and mode lists are never that long. */
export const MAX_CSI_PARAMS = 32;

/** Parameter values are clamped here: far above every tracked mode, far below integer overflow. */
const MAX_PARAM_VALUE = 99_999;

/** Bytes of text walked in JS before the ground state falls back to native `indexOf`: a native call costs about this much. */
const GROUND_PROBE_BYTES = 24;

const BACKSLASH = 0x5c;

// States (plain numbers, not an enum: the server also runs under type-stripping runtimes).
const GROUND = 0;
const ESCAPE = 1;
const ESCAPE_INTERMEDIATE = 2;
const CSI = 3;
const OSC_CODE = 4;
const OSC_PAYLOAD = 5;
/** an OSC not collected (not wanted, or over the payload limit): ends at BEL or ESC */
const OSC_SKIP = 6;
/** a DCS being collected: ends at ESC (ST) only */
const DCS_PAYLOAD = 7;
/** DCS not collected, SOS, PM, APC: ends at ESC (ST) only */
const STRING_SKIP = 8;
/** the byte after an ESC that ended a string; `\` completes ST */
const STRING_ESCAPE = 9;

/** What a scanner collects beyond the sequence structure. */
export interface MachineLimits {
  /** Longest OSC (or collected DCS) payload kept; a longer string is skipped and not reported. */
  readonly payloadBytes: number;
  /** Whether DCS payloads are collected and reported (`dcsEnd`); otherwise DCS is skipped like APC. */
  readonly collectDcs: boolean;
}

export abstract class EscapeSequenceMachine {
  private state = GROUND;
  /**
   * Where the sequence being read began (its ESC) in the chunk being fed; -1 while it began in an
   * earlier chunk. Valid inside the hooks.
   */
  protected sequenceStart = -1;
  /** bytes fed since the machine was made or reset, up to the chunk being fed */
  private fedBefore = 0;
  /** where the sequence being read began (its ESC), counted in bytes fed */
  private sequenceAt = 0;

  // CSI, valid inside csiDispatch
  protected readonly params = new Array<number>(MAX_CSI_PARAMS).fill(0);
  /** index of the last parameter; params[0 ..= paramIndex] were read */
  protected paramIndex = 0;
  /** the private-parameter byte (`<`, `=`, `>`, `?`) or 0 */
  protected prefix = 0;
  /** intermediate byte, 0 = none, -1 = more than one */
  protected intermediate = 0;
  /** parameter bytes out of place or bytes ≥ 0x80: a terminal ignores the sequence */
  protected csiInvalid = false;
  /** more than MAX_CSI_PARAMS parameters: the first MAX_CSI_PARAMS were kept */
  protected csiOverflow = false;
  private csiStarted = false;
  /** this CSI's parameters are parsed (csiWantsParams said so) */
  private csiParse = false;
  /** digits go nowhere: inside a `:` sub-parameter, or past MAX_CSI_PARAMS */
  private csiSkipDigits = false;

  // OSC and DCS, valid inside oscEnd / dcsEnd
  protected oscCode = 0;
  private oscHasCode = false;
  private payload: Uint8Array | null = null;
  private payloadLength = 0;
  private readonly limits: MachineLimits;

  constructor(limits: MachineLimits) {
    this.limits = limits;
  }

  // Hooks: the subclass reads the sequence that just ended. `at` is the offset just after it in the chunk.

  /** BEL outside a string (in text, or executed inside ESC or CSI). */
  protected bell(_at: number): void {}
  /** `ESC final` without intermediates (final 0x30–0x7e other than the sequence introducers). */
  protected escDispatch(_final: number, _at: number): void {}
  /** Whether the CSI with this prefix (0 for none) needs its parameters; unparsed ones are skipped to their final byte. */
  protected csiWantsParams(_prefix: number): boolean {
    return true;
  }
  /** A CSI's final byte; params, paramIndex, prefix, intermediate, csiInvalid and csiOverflow describe it. */
  protected csiDispatch(_final: number, _at: number): void {}
  /** Whether an OSC with this code is collected and reported; others are skipped. */
  protected oscWanted(_code: number): boolean {
    return false;
  }
  /**
   * A collected OSC ended at its terminator, at index `end` of the chunk: a BEL (`st` false) or the
   * ESC of an ST (`st` true; `stringTerminated` follows at the next byte, maybe in the next chunk).
   */
  protected oscEnd(_end: number, _st: boolean): void {}
  /** A collected DCS ended at the ESC of its ST, at index `end` of the chunk. */
  protected dcsEnd(_end: number): void {}
  /** The byte after the ESC that ended a string: `at` is just after the `\` of an ST, else at that byte. */
  protected stringTerminated(_at: number): void {}

  /** The payload of the OSC or DCS that just ended (valid inside oscEnd / dcsEnd). */
  protected collected(): Uint8Array {
    return this.payload!.subarray(0, this.payloadLength);
  }

  /** Back to ground, as for a fresh terminal. */
  protected resetMachine(): void {
    this.state = GROUND;
    this.fedBefore = 0;
    this.sequenceAt = 0;
  }

  /**
   * The sequence the stream ends inside, if any (docs/design.md § Snapshots: a snapshot made there
   * is followed by these bytes): how many bytes at the end of what was fed belong to it (0 at
   * ground), and whether a terminal executes the C0 controls among them as it reads them (ESC and
   * CSI do; OSC, DCS and the other strings ignore them or keep them as payload).
   */
  unfinishedSequence(): { bytes: number; executesControls: boolean } {
    const state = this.state;
    if (state === GROUND) return { bytes: 0, executesControls: false };
    return { bytes: this.fedBefore - this.sequenceAt, executesControls: state === ESCAPE || state === ESCAPE_INTERMEDIATE || state === CSI };
  }

  /** Run the machine over one chunk; the hooks fire as sequences end. */
  protected run(chunk: Uint8Array): void {
    const n = chunk.length;
    let nextEsc = -1;
    let nextBel = -1;
    let i = 0;
    this.sequenceStart = -1;
    while (i < n) {
      if (this.state === GROUND) {
        // Short gaps (TUI redraws: a few cells between SGRs) are cheaper to walk than to search natively.
        const probeEnd = i + GROUND_PROBE_BYTES < n ? i + GROUND_PROBE_BYTES : n;
        let j = i;
        while (j < probeEnd && chunk[j] !== ESC && chunk[j] !== BEL) j++;
        if (j < probeEnd) {
          if (chunk[j] === BEL) this.bell(j + 1);
          else this.enterEscape(j);
          i = j + 1;
          continue;
        }
        if (nextEsc < probeEnd) nextEsc = indexOrEnd(chunk, ESC, probeEnd);
        if (nextBel < probeEnd) nextBel = indexOrEnd(chunk, BEL, probeEnd);
        if (nextBel < nextEsc) {
          this.bell(nextBel + 1);
          i = nextBel + 1;
        } else if (nextEsc < n) {
          this.enterEscape(nextEsc);
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
        case DCS_PAYLOAD:
          i = this.payloadBytes(chunk, i);
          break;
        case OSC_SKIP:
        case STRING_SKIP:
          i = this.skipString(chunk, i);
          break;
        case STRING_ESCAPE:
          if (chunk[i] === BACKSLASH) {
            this.stringTerminated(i + 1);
            this.state = GROUND;
            i++;
          } else {
            this.stringTerminated(i);
            this.state = ESCAPE; // the ESC starts a new sequence: reprocess this byte there
          }
          break;
      }
    }
    this.fedBefore += n;
  }

  private enterEscape(at: number): void {
    this.state = ESCAPE;
    this.sequenceStart = at;
    this.sequenceAt = this.fedBefore + at;
  }

  /** An ESC that ends a string: ST if `\` follows, else the start of a new sequence. */
  private enterStringEscape(at: number): void {
    this.state = STRING_ESCAPE;
    this.sequenceStart = at;
    this.sequenceAt = this.fedBefore + at;
  }

  /** C0 controls that act inside escape and control sequences; true if `b` was one. */
  private control(b: number, i: number): boolean {
    if (b >= 0x20) return false;
    if (b === ESC) this.enterEscape(i);
    else if (b === CAN || b === SUB) this.state = GROUND;
    else if (b === BEL) this.bell(i + 1);
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
    } else if (b === 0x50 /* P */) {
      if (this.limits.collectDcs) this.startPayload(DCS_PAYLOAD);
      else this.state = STRING_SKIP;
    } else if (b === 0x58 /* X */ || b === 0x5e /* ^ */ || b === 0x5f /* _ */) {
      this.state = STRING_SKIP;
    } else {
      this.escDispatch(b, i + 1);
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
      const prefixed = b >= 0x3c && b <= 0x3f;
      if (prefixed) this.prefix = b;
      this.csiParse = this.csiWantsParams(this.prefix);
      if (prefixed) return i + 1;
    }
    return this.csiBody(chunk, i);
  }

  /** Parameters, intermediates and the final byte of a CSI; returns where scanning goes on. */
  private csiBody(chunk: Uint8Array, i: number): number {
    const n = chunk.length;
    const parse = this.csiParse;
    const params = this.params;
    for (; i < n; i++) {
      const b = chunk[i];
      if (b >= 0x30 && b <= 0x3f) {
        if (this.intermediate !== 0 || b >= 0x3c) {
          this.csiInvalid = true;
        } else if (!parse) {
          // skipped to the final byte
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
        this.csiDispatch(b, i + 1);
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
      if (this.oscHasCode && this.oscWanted(this.oscCode)) this.startPayload(OSC_PAYLOAD);
      else this.state = OSC_SKIP;
    } else if (b === BEL || b === CAN || b === SUB) {
      this.state = GROUND; // an OSC without payload: neither scanner needs one
    } else if (b === ESC) {
      this.enterStringEscape(i);
    } else if (b >= 0x20) {
      this.state = OSC_SKIP;
    }
  }

  private startPayload(state: number): void {
    this.state = state;
    this.payloadLength = 0;
    this.payload ??= new Uint8Array(this.limits.payloadBytes);
  }

  /** A collected OSC or DCS payload: printable bytes are kept, other C0 controls ignored. */
  private payloadBytes(chunk: Uint8Array, i: number): number {
    const n = chunk.length;
    const payload = this.payload!;
    const osc = this.state === OSC_PAYLOAD;
    const limit = this.limits.payloadBytes;
    let len = this.payloadLength;
    for (; i < n; i++) {
      const b = chunk[i];
      if (b >= 0x20) {
        if (len === limit) {
          this.state = osc ? OSC_SKIP : STRING_SKIP;
          return i + 1;
        }
        payload[len++] = b;
      } else if (b === ESC) {
        this.payloadLength = len;
        if (osc) this.oscEnd(i, true);
        else this.dcsEnd(i);
        this.enterStringEscape(i); // after the hook: sequenceStart still marks the string that ended
        return i + 1;
      } else if (b === BEL && osc) {
        this.payloadLength = len;
        this.state = GROUND;
        this.oscEnd(i, false);
        return i + 1;
      } else if (b === CAN || b === SUB) {
        this.state = GROUND;
        return i + 1;
      }
    }
    this.payloadLength = len;
    return i;
  }

  private skipString(chunk: Uint8Array, i: number): number {
    const n = chunk.length;
    const belEnds = this.state === OSC_SKIP;
    for (; i < n; i++) {
      const b = chunk[i];
      if (b >= 0x20) continue;
      if (b === ESC) {
        this.enterStringEscape(i);
        return i + 1;
      }
      if (b === CAN || b === SUB || (b === BEL && belEnds)) {
        this.state = GROUND;
        return i + 1;
      }
    }
    return i;
  }
}

function indexOrEnd(chunk: Uint8Array, byte: number, from: number): number {
  const j = chunk.indexOf(byte, from);
  return j < 0 ? chunk.length : j;
}
