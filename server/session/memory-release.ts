/**
 * docs/design.md § Memory that comes back: once sessions end, what they used goes back to the
 * operating system. A JavaScript heap gives back its own pages, but the bytes of buffers (rings,
 * PTY reads, frames, the headless worker's terminals) live in the C library's heap, which keeps
 * freed pages resident in one arena per thread that ever allocated: after 100 MB through ten
 * sessions the server stayed ~200 MB above a fresh one with every session deleted. So, a little
 * after a session is removed (and after the headless worker let go of a screen), a full
 * collection frees the dead buffers and glibc's malloc_trim hands the free pages back.
 */
import { createRequire } from "node:module";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/** Wait this long after the last trigger: a deletion's sockets and buffers are dead by then, and a burst of deletions costs one release. */
export const RELEASE_DELAY_MS = 1_000;

type Trim = () => boolean;

let trim: Trim | null | undefined;
let collect: (() => void) | null | undefined;
let timer: ReturnType<typeof setTimeout> | null = null;
let releases = 0;

/** glibc's malloc_trim through the native helper; null where it is not built or not glibc's. */
function loadTrim(): Trim | null {
  try {
    const mod = createRequire(import.meta.url)("webmux-malloc-trim") as { trimFreedMemory?: unknown };
    return typeof mod.trimFreedMemory === "function" ? (mod.trimFreedMemory as Trim) : null;
  } catch {
    return null;
  }
}

/** A full collection of this thread's heap: `gc` when exposed, Bun's, or V8's made reachable. */
export function fullCollector(): (() => void) | null {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (typeof exposed === "function") return () => exposed();
  const bun = (globalThis as { Bun?: { gc?: (force: boolean) => void } }).Bun;
  if (typeof bun?.gc === "function") return () => bun.gc!(true);
  try {
    // V8 creates `gc` only in contexts made after the flag is set; the flag stays set.
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as unknown;
    return typeof gc === "function" ? (gc as () => void) : null;
  } catch {
    return null;
  }
}

/** Collect, then hand free C heap pages back; true when the C library released some. */
export function releaseFreedMemory(): boolean {
  releases++;
  collect ??= fullCollector();
  collect?.();
  trim ??= loadTrim();
  return trim ? trim() : false;
}

/** Release soon (debounced): after a session is removed or the headless worker freed a screen. */
export function scheduleMemoryRelease(): void {
  if (timer) clearTimeout(timer);
  timer = setTimeout(() => {
    timer = null;
    releaseFreedMemory();
  }, RELEASE_DELAY_MS);
  timer.unref?.();
}

/** Releases run so far (for tests). */
export function memoryReleases(): number {
  return releases;
}
