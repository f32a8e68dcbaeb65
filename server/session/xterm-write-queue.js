// @ts-check
/**
 * Drops what a closing xterm terminal still has queued to parse. xterm's dispose leaves its write
 * queue alone and goes on parsing it in 12 ms slices, so a deleted session with a backlog (up to
 * the headless screen's MAX_BACKLOG_BYTES) kept its terminal, scrollback and all, past the
 * collection meant to free it, and took the worker's CPU from the live screens until the queue ran
 * dry (docs/design.md § Memory that comes back). The queue is internal to xterm: where its shape
 * differs (another version) nothing is dropped, the terminal is freed once its queue drains, and
 * false says so (xterm-write-queue.test.ts fails on such an upgrade).
 * Plain JavaScript, as the worker that uses it (headless-worker.js).
 * @param {object} term an @xterm/headless Terminal
 * @returns {boolean} whether the queue was found and emptied
 */
export function discardQueuedWrites(term) {
  const queue = /** @type {{ _core?: { _writeBuffer?: Record<string, unknown> } }} */ (term)._core?._writeBuffer;
  if (!queue || !Array.isArray(queue._writeBuffer) || !Array.isArray(queue._callbacks)) return false;
  if (typeof queue._bufferOffset !== "number" || typeof queue._pendingData !== "number") return false;
  queue._writeBuffer.length = 0;
  queue._callbacks.length = 0;
  queue._bufferOffset = 0;
  queue._pendingData = 0;
  return true;
}
