import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";

/** The agent's program: `$<variable>` of the session's environment when set, else `name` on its PATH. */
export function agentBinary(env: Readonly<Record<string, string>>, variable: string, name: string): string {
  const configured = env[variable];
  return configured && configured.trim() !== "" ? configured : name;
}

/** Where `program` would be run from with this environment's PATH, or null when it cannot be. */
export function findExecutable(program: string, env: Readonly<Record<string, string>>): string | null {
  const candidates = program.includes("/") ? [program] : (env.PATH ?? "").split(delimiter).filter(Boolean).map((dir) => join(dir, program));
  for (const path of candidates) {
    if (!isAbsolute(path) && !program.includes("/")) continue;
    try {
      if (!statSync(path).isFile()) continue;
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // not this one
    }
  }
  return null;
}

/** Throws a message a user can act on when the agent's program is missing. */
export function requireExecutable(program: string, env: Readonly<Record<string, string>>, variable: string): void {
  if (findExecutable(program, env) === null) {
    throw new Error(`cannot find ${program} (install it, put it on PATH, or name it with ${variable})`);
  }
}
