/**
 * Every tuning number of output flow between a session and its connections, in one place
 * (docs/design.md § Back-pressure). Their order matters, and flow-control.test.ts holds it:
 *
 *   COALESCE_AFTER_BYTES < FLUSH_BYTES ≤ PAUSE_LOW_WATER_BYTES < PAUSE_HIGH_WATER_BYTES < SEND_QUEUE_LIMIT_BYTES
 *   COALESCE_WINDOW_MS ≤ COMPRESSED_COALESCE_WINDOW_MS < SLOW_CHECK_INTERVAL_MS < WRITE_DRAIN_TIMEOUT_MS
 *
 * - typing's echoes never wait: coalescing starts only after more than an echo's worth of output;
 * - one coalesced frame never pushes the controller from "resumed" straight past "paused";
 * - the PTY is paused (the program slows down) well before a controller's queue is big enough to
 *   be cut: the controller is paced, only observers that cannot keep up are cut;
 * - a stalled connection is checked several times before its drain timeout cuts it.
 */

/** Coalescing starts once this much output came without a pause: typing's echoes never wait. */
export const COALESCE_AFTER_BYTES = 16 * 1024;
/** Coalesced output is sent at once when it reaches this size instead of waiting for the next tick. */
export const FLUSH_BYTES = 256 * 1024;
/**
 * Output that keeps coming is sent at most this often: a flood becomes a few large frames (one
 * send per client instead of one per 4 KiB PTY read), while output after a pause — a keystroke's
 * echo — still goes out in the same event-loop turn.
 */
export const COALESCE_WINDOW_MS = 2;
/**
 * The window instead while every connection of the session compresses (permessage-deflate):
 * compression is for slow links, where 10 ms is far below a round trip, and each message costs a
 * zlib flush and a trip through libuv's pool; a flood then goes out as ~150 KiB messages instead
 * of ~20 KiB ones, 1.29× the throughput in the same run (docs/design.md § Where the CPU goes).
 */
export const COMPRESSED_COALESCE_WINDOW_MS = 10;
/** The PTY is resumed once the controller's connection is back under this… */
export const PAUSE_LOW_WATER_BYTES = 256 * 1024;
/** …after being paused while it had more than this queued. */
export const PAUSE_HIGH_WATER_BYTES = 1024 * 1024;
/** A connection whose unsent bytes pass this is cut with 4408: past it, resuming costs less than catching up. */
export const SEND_QUEUE_LIMIT_BYTES = 4 * 1024 * 1024;
/** How often connections are checked for stalled writes. */
export const SLOW_CHECK_INTERVAL_MS = 1_000;
/** A connection whose queued bytes make no progress for this long is cut with 4408 (docs/design.md § Back-pressure). */
export const WRITE_DRAIN_TIMEOUT_MS = 10_000;
