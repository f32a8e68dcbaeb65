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
