/** Poll `check` until it returns a truthy value or the deadline passes (tests never sleep to synchronise). */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  { timeout = 10_000, interval = 20, message }: { timeout?: number; interval?: number; message?: string } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeout;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
      last = value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`${message ?? "condition"} not met within ${timeout} ms (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
    }
    await new Promise((r) => setTimeout(r, interval));
  }
}
