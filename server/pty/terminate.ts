/**
 * Ending a hosted program as a delete does (docs/protocol.md § HTTP API): SIGHUP first (a shell then hangs up its jobs),
 * SIGKILL when it is still there after the grace, since some programs ignore SIGHUP.
 * Depends on the interface only, so the session core can use it with any PtyProcess.
 */
import type { PtyExit, PtyProcess } from "./pty.ts";

/** `DELETE /api/sessions/{id}` (docs/protocol.md § HTTP API): a program gets 3 s to honour SIGHUP before it is killed. */
export const TERMINATE_GRACE_MS = 3_000;

/**
 * Send SIGHUP to the program's process group, SIGKILL after `graceMs` unless it exited, and
 * resolve with its exit once observed (its last output delivered). An exited program resolves
 * at once and is not signalled.
 */
export async function terminate(pty: PtyProcess, graceMs: number = TERMINATE_GRACE_MS): Promise<PtyExit> {
  pty.kill("SIGHUP");
  const escalation = setTimeout(() => pty.kill("SIGKILL"), graceMs);
  try {
    return await pty.exited;
  } finally {
    clearTimeout(escalation);
  }
}
