/**
 * Resume as a session operation (docs/design.md § Resume and replay, § Snapshots): from a client's
 * resume point to a position and either the missing bytes or a snapshot. It knows nothing about
 * connections or frames; the hub frames what it returns and sends it.
 *
 * Exactly once: a plan is made synchronously and covers output up to `position.end`, the ring's end
 * at that moment. A caller that has delivered every output event before planning (the hub flushes
 * its coalesced output first) and registers for live output in the same turn of the event loop
 * gets each byte once: the plan up to `end`, live output from `end` on.
 */
import type { PositionPayload } from "../contract/types.ts";
import type { HeadlessScreen } from "./headless-screen.ts";
import type { RingBuffer } from "./ring-buffer.ts";
import type { TerminalScanner } from "../vt/terminal-scanner.ts";
import { followedBy, MAX_UNFINISHED_UTF8_BYTES, unfinishedTail } from "../vt/unfinished-sequence.ts";

export type ResumePoint = { generation: string; offset: number };

/** What a made snapshot came to: its bytes, and whether the program should be asked to repaint. */
export type MadeSnapshot = { bytes: string | Uint8Array; redraw: boolean };

export type ReplayPlan =
  /** The client keeps its screen; `bytes` are exactly `[position.start, position.end)`. */
  | { mode: "append"; position: PositionPayload; bytes: Uint8Array }
  /** The raw output `[0, end)`: exact, since nothing was cut and the grid never changed. */
  | { mode: "reset"; position: PositionPayload; raw: Uint8Array }
  /** A snapshot of the terminal's state as of `position.end`, made by the headless screen. */
  | { mode: "reset"; position: PositionPayload; made: Promise<MadeSnapshot> };

/** What a replay reads: the session's current run. */
export type ReplaySource = {
  readonly generation: string;
  readonly ring: RingBuffer;
  readonly scanner: TerminalScanner;
  readonly screen: Pick<HeadlessScreen, "serialize" | "stats">;
  /** the ring's end when the grid last changed during this run (0: never since its first byte);
   * bytes before it were drawn for another size */
  readonly resizedAt: number;
};

const COLOR_SCHEME_REPORTS_ON = "\x1b[?2031h";

/**
 * Plans the replays of one session. It remembers the mirror's gap count at the last redraw request,
 * so a program is asked to repaint once per loss of output, not at every reset after one
 * (docs/design.md § Redraw request).
 */
export class Replayer {
  private gapsAtRedraw = 0;

  constructor(private readonly source: () => ReplaySource) {}

  /** `history: false` (`?history=0`): a truncated reset carries the modes alone. */
  plan(resume: ResumePoint | null, options: { history: boolean }): ReplayPlan {
    const { generation, ring, scanner, screen, resizedAt } = this.source();
    const end = ring.end;
    const resizedSinceStart = resizedAt > 0;
    // A client behind the last resize would get bytes drawn for the old size after a control frame
    // with the new one: it gets the terminal as it is instead.
    if (resume !== null && resume.generation === generation && ring.has(resume.offset) && resume.offset >= resizedAt) {
      return {
        mode: "append",
        position: { generation, mode: "append", start: resume.offset, end, truncated: ring.truncated },
        bytes: ring.slice(resume.offset, end),
      };
    }
    if (!ring.truncated && !resizedSinceStart) {
      return { mode: "reset", position: { generation, mode: "reset", start: 0, end, truncated: false }, raw: ring.slice(0, end) };
    }
    // The output may end inside a sequence the mirror has begun to read (docs/design.md § Snapshots):
    // its bytes follow the snapshot, so the client reads the rest of it as the mirror does.
    const sequence = scanner.unfinishedSequence();
    const recentFrom = Math.max(ring.start, end - Math.max(sequence.bytes, MAX_UNFINISHED_UTF8_BYTES));
    const tail = unfinishedTail(ring.slice(recentFrom, end), sequence);
    if (!ring.truncated) {
      // Resized: the raw bytes would replay the old sizes' layout (vim's old scroll region, lines
      // wrapped at the old width) into the new grid. The made snapshot is the screen as it is; if
      // it cannot be made, the raw bytes are still better than nothing.
      const raw = ring.slice(0, end);
      const made = screen.serialize().then(
        (state) => ({ bytes: followedBy(state + (scanner.colorSchemeReports ? COLOR_SCHEME_REPORTS_ON : ""), tail), redraw: false }),
        () => ({ bytes: raw, redraw: false }),
      );
      return { mode: "reset", position: { generation, mode: "reset", start: 0, end, truncated: false }, made };
    }
    // Truncated: the retained bytes cannot be parsed from an arbitrary cut.
    const modes = scanner.restoreSequence();
    const colorScheme = scanner.colorSchemeReports ? COLOR_SCHEME_REPORTS_ON : "";
    const serialized = options.history ? screen.serialize().catch(() => null) : Promise.resolve(null);
    const made = serialized.then((state) => {
      // docs/design.md § Redraw request: only a client left without the screen is worth a repaint.
      const gaps = screen.stats().gaps;
      const redraw = state === null || gaps > this.gapsAtRedraw;
      if (redraw) this.gapsAtRedraw = gaps;
      return { bytes: followedBy(state === null ? modes : state + colorScheme, tail), redraw };
    });
    return { mode: "reset", position: { generation, mode: "reset", start: end, end, truncated: true }, made };
  }
}
