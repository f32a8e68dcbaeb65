/** Concurrent runs one token may have (docs/agent-api.md § Concurrency; queued runs count, they hold their caller). */
export const MAX_RUNS_PER_TOKEN = 10;
/** What a refused run is told to wait before trying again (`Retry-After: 5`, docs/agent-api.md § Concurrency). */
export const RUN_RETRY_AFTER_S = 5;

/**
 * Run slots, counted per token (not across all tokens): one busy agent cannot starve another.
 * A slot is given back exactly once, whether the run ended, timed out or its caller left.
 */
export class RunSlots {
  private readonly inUse = new Map<string, number>();

  constructor(private readonly limit = MAX_RUNS_PER_TOKEN) {}

  /** A release function, or null when the token has no slot left. */
  acquire(tokenId: string): (() => void) | null {
    const used = this.inUse.get(tokenId) ?? 0;
    if (used >= this.limit) return null;
    this.inUse.set(tokenId, used + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const now = (this.inUse.get(tokenId) ?? 1) - 1;
      if (now <= 0) this.inUse.delete(tokenId);
      else this.inUse.set(tokenId, now);
    };
  }

  used(tokenId: string): number {
    return this.inUse.get(tokenId) ?? 0;
  }
}
