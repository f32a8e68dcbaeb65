/**
 * Where a local `webmux serve` listens and keeps its data unless told otherwise: shared by the
 * serve flags and by the client commands, which must not load the server to know it.
 */
import { homedir } from "node:os";
import { join } from "node:path";

/** Default port: high, unassigned and easy to remember. */
export const DEFAULT_PORT = 8999;

export function defaultDataDir(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_STATE_HOME && env.XDG_STATE_HOME.startsWith("/") ? env.XDG_STATE_HOME : join(homedir(), ".local", "state");
  return join(base, "webmux");
}
