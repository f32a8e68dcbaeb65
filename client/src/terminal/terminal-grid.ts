/**
 * Who decides the terminal's size. The controller's terminal follows its box and tells the server
 * (0x01); an observer never resizes the PTY: it shows the controller's grid from 0x06, at the
 * point in the stream where it changed, and scrolls inside its box when that grid is larger.
 */
import type { FitAddon } from "@xterm/addon-fit";
import type { Terminal } from "@xterm/xterm";
import { clampGrid } from "../../../server/contract/protocol.ts";
import type { ControlPayload } from "../../../server/contract/types.ts";

/** Window drags and the phone keyboard sliding in fire many resizes: fit once they pause. */
export const FIT_DEBOUNCE_MS = 80;

export type GridDeps = {
  isController: () => boolean;
  sendResize: (cols: number, rows: number) => boolean;
};

export class TerminalGrid {
  private control: ControlPayload | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private readonly observer: ResizeObserver;

  constructor(
    private readonly terminal: Terminal,
    private readonly fitAddon: FitAddon,
    host: HTMLElement,
    private readonly deps: GridDeps,
  ) {
    this.observer = new ResizeObserver(() => this.fitSoon());
    this.observer.observe(host);
  }

  /**
   * A 0x06 arrived (attach, control or size change, or this connection became its client's
   * effective one). During a replay everyone writes at the grid the history was produced for;
   * the controller fits its box once the replay is written (`replayWritten`).
   */
  apply(control: ControlPayload, replaying: boolean): void {
    this.control = control;
    if (this.deps.isController() && !replaying) {
      this.fit();
      return;
    }
    const { cols, rows } = control;
    // In stream order: output after this frame was produced for the new grid.
    this.terminal.write("", () => {
      if ((replaying || !this.deps.isController()) && (this.terminal.cols !== cols || this.terminal.rows !== rows)) {
        this.terminal.resize(cols, rows);
      }
    });
  }

  /** The replay ended (0x02): once xterm has parsed it, the controller's terminal fills its box. */
  replayWritten(): void {
    this.terminal.write("", () => this.fit());
  }

  /** The grid that fills the box, or null while the box has no size (hidden, not laid out). */
  proposed(): { cols: number; rows: number } | null {
    const dims = this.fitAddon.proposeDimensions();
    if (!dims || !Number.isFinite(dims.cols) || !Number.isFinite(dims.rows) || dims.cols <= 0 || dims.rows <= 0) return null;
    return clampGrid(dims.cols, dims.rows);
  }

  /** Controller only: fill the box and make the PTY match. */
  fit(): void {
    if (!this.deps.isController()) return;
    const size = this.proposed();
    if (!size) return;
    if (this.terminal.cols !== size.cols || this.terminal.rows !== size.rows) this.terminal.resize(size.cols, size.rows);
    if (this.control && (this.control.cols !== size.cols || this.control.rows !== size.rows)) {
      this.deps.sendResize(size.cols, size.rows);
    }
  }

  private fitSoon(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.fit();
    }, FIT_DEBOUNCE_MS);
  }

  dispose(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.observer.disconnect();
  }
}
