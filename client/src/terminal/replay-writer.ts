/**
 * What reaches a terminal's screen, in stream order through xterm's write queue: the local copy,
 * a reset's snapshot (after RIS, with the truncation marker above it when the ring lost its
 * start), an append's missing bytes, live output. It knows which of those bytes are replayed, and
 * mutes the terminal's answers to them (docs/design.md, Device queries and auto-replies): a query
 * in a replay was asked long ago. No DOM and no socket: `terminal` is xterm.js or @xterm/headless.
 */
import type { PositionPayload } from "../../../server/contract/types.ts";
import { UnfinishedSequenceTracker } from "../../../server/vt/unfinished-sequence-tracker.ts";
import { truncationMarkerSequence } from "./plain-text.ts";

/**
 * A reset snapshot goes to xterm in slices of this size: xterm parses one written chunk without
 * yielding, so a 4 MiB snapshot as one chunk would block the page for its whole parse and the
 * overlay's timer could never fire; between slices xterm yields, the overlay shows and the page
 * stays responsive. (xterm keeps its parser and UTF-8 state across writes.)
 */
export const SNAPSHOT_SLICE_BYTES = 128 * 1024;

const RIS = "\x1bc";
const encoder = new TextEncoder();

/** The part of a terminal the writer uses. */
export type ReplayTerminal = {
  write(data: string | Uint8Array, callback?: () => void): void;
  readonly rows: number;
};

export type ReplayWriterEvents = {
  /** Everything up to `offset` of `generation` is on screen (its bytes are parsed). */
  rendered(generation: string, offset: number): void;
  /** The replay that `socket`'s position frame began is parsed: acknowledge it on that socket (0x07). */
  replayParsed(socket: number): void;
};

export type ReplayWriter = {
  /** While true, what the terminal answers is an answer to a replayed query: drop it. */
  readonly repliesMuted: boolean;
  /**
   * The unfinished sequence (or UTF-8 character) at the end of what the terminal has parsed, to
   * store after a snapshot of it (docs/design.md § Snapshots); empty at ground.
   */
  unfinishedTail(): Uint8Array;
  /** The local copy, painted before any socket answers; `onParsed` once it is on screen. */
  writeCopy(serialized: string | Uint8Array, generation: string, offset: number, onParsed: () => void): void;
  /** A position frame: a replay begins (a reset's snapshot or an append's bytes follow). */
  position(position: PositionPayload): void;
  /** A reset's snapshot; `onParsed` once it is on screen. Ignored without a position. */
  snapshot(data: Uint8Array, onParsed: () => void): void;
  /** Output bytes that end at `offset` of `generation`. */
  output(data: Uint8Array, generation: string, offset: number): void;
  /** A status frame on socket number `socket`: the first after a position ends that replay. */
  status(socket: number): void;
  /** The socket was lost: a replay it was sending ends here, what follows is the next socket's. */
  socketLost(): void;
};

export function makeReplayWriter(terminal: ReplayTerminal, events: ReplayWriterEvents): ReplayWriter {
  let repliesMuted = false;
  /** a position frame came and its status (the end of that replay) has not */
  let inReplay = false;
  let position: PositionPayload | null = null;
  /** fed each chunk as xterm has parsed it, so it stands where the parsed screen stands */
  const tracker = new UnfinishedSequenceTracker();

  /** Every byte reaches the terminal here. */
  function put(data: string | Uint8Array, onParsed?: () => void): void {
    terminal.write(data, () => {
      tracker.feed(typeof data === "string" ? encoder.encode(data) : data);
      onParsed?.();
    });
  }

  /** Everything up to `offset` of `generation` is on screen once this chunk is parsed. */
  function writeAt(data: string | Uint8Array, generation: string, offset: number, onDone?: () => void): void {
    put(data, () => {
      events.rendered(generation, offset);
      onDone?.();
    });
  }

  /** Replies are dropped from here in the write queue on… */
  function muteFromHere(): void {
    terminal.write("", () => (repliesMuted = true));
  }

  /** …and taken again from here on; `then` runs at that point of the queue. */
  function unmuteFromHere(then?: () => void): void {
    terminal.write("", () => {
      repliesMuted = false;
      then?.();
    });
  }

  return {
    get repliesMuted() {
      return repliesMuted;
    },
    unfinishedTail: () => tracker.tail(),
    writeCopy(serialized, generation, offset, onParsed) {
      muteFromHere();
      writeAt(serialized, generation, offset, onParsed);
      unmuteFromHere();
    },
    position(next) {
      position = next;
      inReplay = true;
      muteFromHere();
    },
    snapshot(data, onParsed) {
      const at = position;
      if (!at) return;
      const prefix = encoder.encode(RIS + (at.truncated ? truncationMarkerSequence(terminal.rows) : ""));
      const chunk = new Uint8Array(prefix.length + data.length);
      chunk.set(prefix);
      chunk.set(data, prefix.length);
      for (let start = 0; start + SNAPSHOT_SLICE_BYTES < chunk.length; start += SNAPSHOT_SLICE_BYTES) {
        put(chunk.subarray(start, start + SNAPSHOT_SLICE_BYTES));
      }
      const lastStart = Math.max(0, Math.ceil(chunk.length / SNAPSHOT_SLICE_BYTES) - 1) * SNAPSHOT_SLICE_BYTES;
      writeAt(chunk.subarray(lastStart), at.generation, at.end, onParsed);
    },
    output(data, generation, offset) {
      writeAt(data, generation, offset);
    },
    status(socket) {
      if (!inReplay) return;
      inReplay = false;
      unmuteFromHere(() => events.replayParsed(socket));
    },
    socketLost() {
      if (!inReplay) return;
      inReplay = false;
      unmuteFromHere();
    },
  };
}
