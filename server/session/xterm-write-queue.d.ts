// Types of xterm-write-queue.js (plain JavaScript so the headless worker can import it).
/** Empties an @xterm/headless terminal's queue of writes not yet parsed; false where its shape is not xterm's. */
export function discardQueuedWrites(term: object): boolean;
