/**
 * The session host follows a shell's integration marks (docs/design.md, What survives a restart)
 * so that a server started after a restart knows whether a command is still running in it: the
 * Agent API's next run then waits for that command, as it would have on the old server.
 */
import { parseMark } from "../agent/marks.ts";
export { SHELL_NONCE_VARIABLE } from "../agent/marks.ts";
import type { ScanEvent } from "../vt/terminal-scanner.ts";

/** Where the shell is, from its last mark: none seen yet, at a prompt, running a command, after one, or a shell that cannot integrate. */
export type ShellPhase = "starting" | "prompt" | "running" | "ended" | "none";

/** A shell's state as its marks tell it; `command` is the running command's line when the shell said it (zsh's E mark). */
export type ShellState = { nonce: string; phase: ShellPhase; command: string; startedAt: number };

export class ShellMarks {
  private phase: ShellPhase = "starting";
  private command = "";
  private announced: string | null = null;
  private startedAt = 0;

  constructor(readonly nonce: string) {}

  /** Go on from a state another host followed (a handover, docs/design.md, What survives a restart). */
  static restore(state: ShellState): ShellMarks {
    const marks = new ShellMarks(state.nonce);
    marks.phase = state.phase;
    marks.command = state.command;
    marks.startedAt = state.startedAt;
    return marks;
  }

  /** The scanner's events for one chunk of output. */
  follow(events: readonly ScanEvent[]): void {
    for (const ev of events) {
      if (ev.type !== "osc" || (ev.code !== 133 && ev.code !== 633)) continue;
      const mark = parseMark(ev.code, ev.data, this.nonce);
      if (!mark) continue;
      switch (mark.kind) {
        case "A":
          this.phase = "prompt";
          this.command = "";
          this.announced = null;
          break;
        case "B":
          if (this.phase !== "running") this.phase = "prompt";
          break;
        case "C":
          this.phase = "running";
          this.command = this.announced ?? "";
          this.announced = null;
          this.startedAt = Date.now();
          break;
        case "D":
          this.phase = "ended";
          break;
        case "E":
          if (this.phase === "running" && this.command === "") this.command = mark.command;
          else if (this.phase !== "running") this.announced = mark.command;
          break;
        case "P":
          this.phase = "none";
          break;
      }
    }
  }

  get state(): ShellState {
    return { nonce: this.nonce, phase: this.phase, command: this.command, startedAt: this.startedAt };
  }
}
