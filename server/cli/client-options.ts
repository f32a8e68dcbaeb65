/**
 * What every client command (ls, new, kill, attach, run, token) needs: where the server is and
 * which token to show it. The token comes from `--token`, `WEBMUX_TOKEN`, or the data dir a
 * local server keeps it in, in that order.
 */
import { resolve } from "node:path";
import { readStoredGlobalToken } from "../store/global-token.ts";
import { flagOrEnv, usage, UsageError, type FlagSpec, type ParsedArgs } from "./args.ts";
import { defaultDataDir, DEFAULT_PORT } from "./local-server.ts";

/** `webmux serve` listens here unless told otherwise. */
export const DEFAULT_URL = `http://127.0.0.1:${DEFAULT_PORT}`;

export const CLIENT_FLAGS: FlagSpec[] = [
  { name: "url", kind: "string", help: `server address (default ${DEFAULT_URL})` },
  { name: "token", kind: "string", help: "token (default: the one a local server keeps in its data dir)" },
  { name: "data-dir", kind: "string", help: "where a local server keeps its token (default $XDG_STATE_HOME/webmux)" },
  { name: "help", kind: "boolean", help: "show this help", short: "h", env: false },
];

export type ClientOptions = {
  /** base URL without a trailing slash, e.g. `http://127.0.0.1:8999` */
  url: string;
  token: string;
};

/** Thrown for a failure a user can act on; `code` is stable, the message is one line. */
export class CliError extends Error {
  constructor(
    readonly code: CliErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "CliError";
  }
}

export type CliErrorCode =
  | "NO_TOKEN"
  | "SERVER_UNREACHABLE"
  | "UNAUTHORIZED"
  | "CAPABILITY_DENIED"
  | "NOT_FOUND"
  | "INVALID_REQUEST"
  | "BUSY"
  | "CONFLICT"
  | "SERVER_ERROR"
  | "BAD_RESPONSE";

function stringFlag(parsed: ParsedArgs, name: string, env: NodeJS.ProcessEnv): string | undefined {
  const value = flagOrEnv(parsed, name, env);
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** Normalise `--url`: http(s) only, no trailing slash; a bare `host:port` means http. */
export function normaliseUrl(raw: string): string {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `http://${raw}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new UsageError(`--url is not a URL: "${raw}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new UsageError(`--url must be http:// or https://, got "${raw}"`);
  return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, "")}`;
}

export function resolveClientOptions(parsed: ParsedArgs, env: NodeJS.ProcessEnv): ClientOptions {
  const url = normaliseUrl(stringFlag(parsed, "url", env) ?? DEFAULT_URL);
  const dataDir = resolve(stringFlag(parsed, "data-dir", env) ?? defaultDataDir(env));
  const token = stringFlag(parsed, "token", env) ?? readStoredGlobalToken(dataDir);
  if (!token) {
    throw new CliError("NO_TOKEN", `no token: pass --token, set WEBMUX_TOKEN, or start the server here once so ${dataDir} holds one`);
  }
  return { url, token };
}

/** True when the server runs on this machine, so a local path (cwd) means the same there. */
export function isLocalUrl(url: string): boolean {
  const host = new URL(url).hostname;
  return host === "localhost" || host === "[::1]" || host === "::1" || /^127\./.test(host);
}

/** `usage: webmux <synopsis>` plus the command's own flags and the client flags. */
export function commandHelp(synopsis: string, description: string, flags: FlagSpec[]): string {
  // A command's own flags come from argv only unless they say otherwise; the client flags also from the environment.
  const own = flags.map((f) => ({ ...f, env: f.env === true }));
  return `usage: webmux ${synopsis}\n\n${description}\n\noptions:\n${usage([...own, ...CLIENT_FLAGS])}\n`;
}
