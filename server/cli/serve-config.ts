import { resolve } from "node:path";
import { DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_CONNECTIONS_PER_ADDRESS } from "../hub/connection-limit.ts";
import type { WebmuxOptions } from "../server.ts";
import type { TlsFiles } from "../http/tls.ts";
import { DEFAULT_BUFFER_BYTES } from "../session/ring-buffer.ts";
import { DEFAULT_MAX_SESSIONS } from "../session/registry.ts";
import { flagOrEnv, parseArgs, UsageError, type FlagSpec } from "./args.ts";
import { defaultDataDir, DEFAULT_PORT } from "./local-server.ts";

/** Below this a ring cannot hold one full-screen repaint of a large terminal. */
export const MIN_BUFFER_BYTES = 64 * 1024;
/** Above this a hundred sessions would exhaust a small machine's memory. */
export const MAX_BUFFER_BYTES = 1024 * 1024 * 1024;
/** A session holds a PTY, a screen and a ring: far past this, the machine, not the flag, is the limit. */
export const MAX_SESSIONS_CEILING = 100_000;
/** No process holds more sockets than this: it is the usual hard `ulimit -n` ceiling of Linux. */
export const MAX_CONNECTIONS_CEILING = 1_048_576;

export const SERVE_FLAGS: FlagSpec[] = [
  { name: "host", kind: "string", help: "address to listen on (default 127.0.0.1)" },
  { name: "port", kind: "string", help: `port (default ${DEFAULT_PORT}; 0 picks a free one)` },
  { name: "token", kind: "string", help: "global token (default: generated, kept in the data dir)" },
  { name: "data-dir", kind: "string", help: "state directory (default $XDG_STATE_HOME/webmux or ~/.local/state/webmux)" },
  { name: "shell", kind: "string", help: "shell for new sessions (default $SHELL or /bin/bash)" },
  { name: "buffer-bytes", kind: "string", help: "replay ring per session in bytes (default 4 MiB)" },
  { name: "max-sessions", kind: "string", help: `sessions held at once, exited ones included (default ${DEFAULT_MAX_SESSIONS}); one more gets 429` },
  { name: "max-connections", kind: "string", help: `concurrent WebSockets in all (default ${DEFAULT_MAX_CONNECTIONS})` },
  {
    name: "max-connections-per-address",
    kind: "string",
    help: `concurrent WebSockets per client address (default ${DEFAULT_MAX_CONNECTIONS_PER_ADDRESS})`,
  },
  { name: "tls-cert", kind: "string", help: "serve HTTPS/WSS with this PEM certificate (with --tls-key)" },
  { name: "tls-key", kind: "string", help: "the PEM private key of --tls-cert" },
  { name: "trust-proxy", kind: "boolean", help: "behind a reverse proxy: believe its X-Forwarded-Proto/-Host and Forwarded headers" },
  { name: "no-qr", kind: "boolean", help: "do not show the login link as a QR code on a terminal" },
  { name: "open-api", kind: "boolean", help: "enable the Agent API (sets open_api.enabled)" },
  { name: "build-if-needed", kind: "boolean", help: "build the web client first if it is missing or stale" },
  {
    name: "stop-sessions-on-exit",
    kind: "boolean",
    help: "run sessions in this process, so they end with it (default: in the data dir's session host, so they outlive it)",
  },
  { name: "help", kind: "boolean", help: "show this help", short: "h", env: false },
];

/** What `webmux serve` was asked for: the server's options, resolved, plus the command's own flags. */
export type ServeConfig = Omit<WebmuxOptions, "staticDir" | "maxConnections" | "maxConnectionsPerAddress" | "maxSessions"> & {
  maxSessions: number;
  maxConnections: number;
  maxConnectionsPerAddress: number;
  tls: TlsFiles | null;
  trustProxy: boolean;
  /** show the login link as a QR code (only ever on a terminal) */
  qr: boolean;
  buildIfNeeded: boolean;
  help: boolean;
};

function parseIntStrict(name: string, raw: string, min: number, max: number): number {
  if (!/^\d+$/.test(raw)) throw new UsageError(`--${name} must be a whole number, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new UsageError(`--${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

function asBool(v: string | boolean | undefined): boolean | null {
  if (v === undefined) return null;
  if (typeof v === "boolean") return v;
  if (["1", "true", "yes", "on"].includes(v.toLowerCase())) return true;
  if (["0", "false", "no", "off", ""].includes(v.toLowerCase())) return false;
  throw new UsageError(`expected a boolean, got "${v}"`);
}

export function parseServeConfig(argv: string[], env: NodeJS.ProcessEnv): ServeConfig {
  const parsed = parseArgs(argv, SERVE_FLAGS);
  if (parsed.positionals.length) throw new UsageError(`unexpected argument "${parsed.positionals[0]}"`);
  const get = (name: string) => {
    const v = flagOrEnv(parsed, name, env);
    return typeof v === "string" ? v : undefined;
  };
  const host = get("host") || "127.0.0.1";
  const port = get("port") !== undefined ? parseIntStrict("port", get("port")!, 0, 65535) : DEFAULT_PORT;
  const bufferBytes =
    get("buffer-bytes") !== undefined
      ? parseIntStrict("buffer-bytes", get("buffer-bytes")!, MIN_BUFFER_BYTES, MAX_BUFFER_BYTES)
      : DEFAULT_BUFFER_BYTES;
  const limit = (name: string, fallback: number) =>
    get(name) !== undefined ? parseIntStrict(name, get(name)!, 1, MAX_CONNECTIONS_CEILING) : fallback;
  const maxSessions = get("max-sessions") !== undefined ? parseIntStrict("max-sessions", get("max-sessions")!, 1, MAX_SESSIONS_CEILING) : DEFAULT_MAX_SESSIONS;
  const maxConnections = limit("max-connections", DEFAULT_MAX_CONNECTIONS);
  const maxConnectionsPerAddress = limit("max-connections-per-address", Math.min(DEFAULT_MAX_CONNECTIONS_PER_ADDRESS, maxConnections));
  const token = get("token") ?? null;
  if (token !== null && token.length < 16) throw new UsageError("--token must be at least 16 characters");
  const certFile = get("tls-cert") || undefined;
  const keyFile = get("tls-key") || undefined;
  if ((certFile === undefined) !== (keyFile === undefined)) throw new UsageError("--tls-cert and --tls-key go together: give both or neither");
  const stopSessionsOnExit = asBool(flagOrEnv(parsed, "stop-sessions-on-exit", env)) ?? false;
  return {
    host,
    port,
    token,
    dataDir: resolve(get("data-dir") || defaultDataDir(env)),
    shell: get("shell") || env.SHELL || "/bin/bash",
    bufferBytes,
    maxSessions,
    maxConnections,
    maxConnectionsPerAddress,
    tls: certFile && keyFile ? { certFile: resolve(certFile), keyFile: resolve(keyFile) } : null,
    trustProxy: asBool(flagOrEnv(parsed, "trust-proxy", env)) ?? false,
    qr: !(asBool(flagOrEnv(parsed, "no-qr", env)) ?? false),
    openApi: asBool(flagOrEnv(parsed, "open-api", env)),
    buildIfNeeded: asBool(flagOrEnv(parsed, "build-if-needed", env)) ?? false,
    // docs/design.md, What survives a restart: sessions live in the session host unless asked otherwise.
    sessionHost: !stopSessionsOnExit,
    stopSessionsOnExit,
    help: parsed.flags.get("help") === true,
  };
}
