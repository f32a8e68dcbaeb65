/**
 * Incremental VT scanner on the PTY output hot path. On the shared escape-sequence state
 * machine (./escape-sequence-machine.ts: raw bytes, sequences split at any byte boundary), it
 * tracks the modes a snapshot must restore (./terminal-modes.ts) and reports the events a
 * session cares about: title, cwd, bell, notifications, mode changes, shell-integration marks.
 */
import { ModeTracker } from "./terminal-modes.ts";
import type { TerminalModes } from "./terminal-modes.ts";
import { isCollectedOsc, oscEvent } from "./terminal-osc.ts";
import { EscapeSequenceMachine, MAX_CSI_PARAMS } from "./escape-sequence-machine.ts";

export type ScanEvent =
  | { type: "title"; at: number; title: string }
  | { type: "cwd"; at: number; cwd: string }
  | { type: "bell"; at: number }
  | { type: "notify"; at: number; title?: string; body: string }
  | { type: "mode"; at: number; mode: number; on: boolean }
  | { type: "osc"; at: number; code: number; data: string };

/** Largest OSC payload collected: an OSC 7 path of PATH_MAX (4096) percent-encoded, or a long OSC 633 command line. Longer ones are dropped, never buffered. */
export const MAX_OSC_PAYLOAD_BYTES = 8 * 1024;

const NO_EVENTS: readonly ScanEvent[] = Object.freeze([]);

export class TerminalScanner extends EscapeSequenceMachine {
  private readonly tracker: ModeTracker;
  private events: ScanEvent[] | null = null;
  /** `at` of the sequence being dispatched, for mode-change events */
  private dispatchAt = 0;
  /** an OSC payload waits for the byte after its ESC terminator, where its event is reported */
  private oscPending = false;

  constructor() {
    super({ payloadBytes: MAX_OSC_PAYLOAD_BYTES, collectDcs: false });
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
    this.resetMachine();
    this.oscPending = false;
  }

  /** Scan one chunk of output. Returns a shared empty array when nothing happened. */
  feed(chunk: Uint8Array): readonly ScanEvent[] {
    this.run(chunk);
    const events = this.events;
    if (events === null) return NO_EVENTS;
    this.events = null;
    return events;
  }

  private emit(event: ScanEvent): void {
    (this.events ??= []).push(event);
  }

  protected override bell(at: number): void {
    this.emit({ type: "bell", at });
  }

  protected override escDispatch(final: number, at: number): void {
    if (final === 0x63 /* c: RIS */) {
      this.dispatchAt = at;
      this.tracker.hardReset();
    } else if (final === 0x3d /* =: DECKPAM */ || final === 0x3e /* >: DECKPNM */) {
      this.dispatchAt = at;
      this.tracker.setPrivateMode(66, final === 0x3d);
    }
  }

  /** Only `CSI ? Pm h/l` needs its parameters; every other CSI (mostly SGR) is skipped to its final byte. */
  protected override csiWantsParams(prefix: number): boolean {
    return prefix === 0x3f;
  }

  protected override csiDispatch(final: number, at: number): void {
    if (this.csiInvalid) return;
    if (this.prefix === 0x3f) {
      if (this.intermediate === 0 && (final === 0x68 /* h */ || final === 0x6c /* l */)) {
        this.dispatchAt = at;
        const count = this.csiOverflow ? MAX_CSI_PARAMS : this.paramIndex + 1;
        for (let k = 0; k < count; k++) this.tracker.setPrivateMode(this.params[k], final === 0x68);
      }
    } else if (final === 0x70 /* p */ && this.intermediate === 0x21 /* ! */ && this.prefix === 0) {
      this.dispatchAt = at;
      this.tracker.softReset(); // DECSTR
    }
  }

  protected override oscWanted(code: number): boolean {
    return isCollectedOsc(code);
  }

  protected override oscEnd(end: number, st: boolean): void {
    if (st) this.oscPending = true;
    else this.dispatchOsc(end + 1);
  }

  protected override stringTerminated(at: number): void {
    if (this.oscPending) this.dispatchOsc(at);
  }

  private dispatchOsc(at: number): void {
    this.oscPending = false;
    const event = oscEvent(this.oscCode, this.collected(), at);
    if (event !== null) this.emit(event);
  }
}
