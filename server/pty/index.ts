/**
 * The PTY entry point: `spawnPty` is the implementation for the runtime this process runs on,
 * chosen here and nowhere else. Each implementation is imported dynamically, so Node never
 * evaluates the Bun file and Bun never loads node-pty (whose child gets SIGHUP under Bun).
 */
import type { SpawnPty } from "./pty.ts";

export { PTY_TERM_NAME, PtySpawnError } from "./pty.ts";
export type { PtyErrorCode, PtyExit, PtyProcess, PtySpawnOptions, SpawnPty } from "./pty.ts";
export { TERMINATE_GRACE_MS, terminate } from "./terminate.ts";

/** Which PTY implementation this process uses. */
export const PTY_RUNTIME: "bun" | "node" = process.versions.bun ? "bun" : "node";

export const spawnPty: SpawnPty =
  PTY_RUNTIME === "bun" ? (await import("./bun-pty.ts")).spawnBunPty : (await import("./node-pty.ts")).spawnNodePty;
