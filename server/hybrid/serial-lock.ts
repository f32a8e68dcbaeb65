/**
 * Runs async steps one at a time, in the order they were asked for: every transition of a hybrid
 * session (moves, starting and stopping an end, parking) goes through one of these, so two steps
 * never interleave and at most one agent process runs per conversation.
 */
export class SerialLock {
  private tail: Promise<unknown> = Promise.resolve();
  private depth = 0;

  /** Steps queued or running. */
  get busy(): boolean {
    return this.depth > 0;
  }

  /** Run `step` after every step asked for before it; its result or error is the caller's. */
  run<T>(step: () => Promise<T> | T): Promise<T> {
    this.depth++;
    const result = this.tail.then(step);
    this.tail = result.then(
      () => this.depth--,
      () => this.depth--,
    );
    return result;
  }

  /** Resolves once everything asked for so far has finished. */
  settled(): Promise<void> {
    return this.run(() => undefined);
  }
}
