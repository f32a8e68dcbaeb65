/** Waiting for a condition with a deadline: benchmarks synchronise on what they observe, never on sleeps. */

export type WaitOptions = { timeoutMs: number; intervalMs?: number; what: string };

/** Default pause between checks of a polled condition (the check itself is the synchronisation). */
const DEFAULT_POLL_MS = 20;

/** Poll `check` until it returns true; throws when the deadline passes (or `check` throws). */
export async function waitUntil(check: () => boolean | Promise<boolean>, options: WaitOptions): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  const interval = options.intervalMs ?? DEFAULT_POLL_MS;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`${options.what}: not reached within ${options.timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}

/** `promise`, or a rejection naming `what` once `timeoutMs` has passed. */
export function withTimeout<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not done within ${timeoutMs} ms`)), timeoutMs);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** What `untilClientHolds` reads of a client: whether it is closed, and how far it got. */
export type WaitingClient = { readonly closed: boolean; readonly closeCode: number | null; readonly offset: number; readonly outputBytes: number };

/**
 * Resolves when `predicate` holds; the client runs every function in `waiters` after each read
 * and on close. Rejects when the client closes first or at the deadline, saying how far it got.
 */
export function untilClientHolds(client: WaitingClient, waiters: Set<() => void>, predicate: () => boolean, timeoutMs: number, what: string): Promise<void> {
  if (predicate()) return Promise.resolve();
  const closedFirst = () => new Error(`${what}: connection closed (${client.closeCode}) first`);
  if (client.closed) return Promise.reject(closedFirst());
  return new Promise((resolve, reject) => {
    const check = () => {
      if (predicate()) {
        finish();
        resolve();
      } else if (client.closed) {
        finish();
        reject(closedFirst());
      }
    };
    const timer = setTimeout(() => {
      finish();
      reject(new Error(`${what}: not reached within ${timeoutMs} ms (offset ${client.offset}, output ${client.outputBytes} B)`));
    }, timeoutMs);
    const finish = () => {
      clearTimeout(timer);
      waiters.delete(check);
    };
    waiters.add(check);
  });
}
