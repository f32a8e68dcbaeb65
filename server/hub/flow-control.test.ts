import { describe, expect, it } from "vitest";
import {
  COALESCE_AFTER_BYTES,
  COALESCE_WINDOW_MS,
  COMPRESSED_COALESCE_WINDOW_MS,
  FLUSH_BYTES,
  PAUSE_HIGH_WATER_BYTES,
  PAUSE_LOW_WATER_BYTES,
  SEND_QUEUE_LIMIT_BYTES,
  SLOW_CHECK_INTERVAL_MS,
  WRITE_DRAIN_TIMEOUT_MS,
} from "./flow-control.ts";
import { OWN_READ_BUFFER_BYTES } from "../pty/own-read-buffer.ts";
import { LENT_PIECE_BYTES, OUTPUT_CHUNK_LIFETIME_BYTES } from "../session/session.ts";

describe("flow-control constants", () => {
  it("keep their order: echoes never wait, a flush never jumps the pause band, the controller is paced long before it could be cut", () => {
    expect(COALESCE_AFTER_BYTES).toBeLessThan(FLUSH_BYTES);
    expect(FLUSH_BYTES).toBeLessThanOrEqual(PAUSE_LOW_WATER_BYTES);
    expect(PAUSE_LOW_WATER_BYTES).toBeLessThan(PAUSE_HIGH_WATER_BYTES);
    expect(PAUSE_HIGH_WATER_BYTES).toBeLessThan(SEND_QUEUE_LIMIT_BYTES);
    // Room for at least one more full flush between pausing and cutting.
    expect(PAUSE_HIGH_WATER_BYTES + FLUSH_BYTES).toBeLessThanOrEqual(SEND_QUEUE_LIMIT_BYTES);
  });

  it("flush the output chunks they hold before the ring may write over them", () => {
    // The stream keeps a session's chunks until a flush, which comes at the latest once FLUSH_BYTES
    // wait: with the read that crossed it, that is less than a chunk is guaranteed to last.
    expect(FLUSH_BYTES + OWN_READ_BUFFER_BYTES).toBeLessThanOrEqual(OUTPUT_CHUNK_LIFETIME_BYTES);
    // A larger lent read (the session host's batch) comes in pieces that keep the same bound.
    expect(FLUSH_BYTES + LENT_PIECE_BYTES).toBeLessThanOrEqual(OUTPUT_CHUNK_LIFETIME_BYTES);
  });

  it("check stalled connections several times before the drain timeout cuts one", () => {
    expect(COALESCE_WINDOW_MS).toBeLessThanOrEqual(COMPRESSED_COALESCE_WINDOW_MS);
    expect(COMPRESSED_COALESCE_WINDOW_MS).toBeLessThan(SLOW_CHECK_INTERVAL_MS);
    expect(SLOW_CHECK_INTERVAL_MS * 3).toBeLessThanOrEqual(WRITE_DRAIN_TIMEOUT_MS);
  });
});
