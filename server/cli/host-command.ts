/**
 * `webmux host` runs the session host of a data dir in the foreground (servers start it detached
 * by themselves); `webmux stop` ends every session of a data dir and its host.
 * docs/design.md, What survives a restart.
 */
import { resolve } from "node:path";
import { WEBMUX_BUILD } from "../host/build.ts";
import { HostConnection, HostUnavailableError } from "../host/host-client.ts";
import { hostPaths, processExists } from "../host/host-dir.ts";
import { PeerRole } from "../host/protocol.ts";
import { HostedSessions } from "../host/hosted-sessions.ts";
import { SessionHost } from "../host/session-host.ts";
import { spawnPty } from "../pty/index.ts";
import { flagOrEnv, parseArgs, UsageError, type FlagSpec } from "./args.ts";
import { commandHelp } from "./client-options.ts";
import { defaultDataDir } from "./local-server.ts";

/** After its last connection closed, a stopping host is gone within this (it only closes its socket). */
const STOP_EXIT_WAIT_MS = 5_000;

const HOST_FLAGS: FlagSpec[] = [
  { name: "data-dir", kind: "string", help: "the data dir whose sessions it holds (default $XDG_STATE_HOME/webmux)" },
  { name: "help", kind: "boolean", help: "show this help", short: "h", env: false },
];

function dataDirOf(argv: string[], usageLine: string, description: string): string | null {
  const parsed = parseArgs(argv, HOST_FLAGS);
  if (parsed.flags.get("help")) {
    process.stdout.write(commandHelp(usageLine, description, HOST_FLAGS.filter((f) => f.name !== "help")));
    return null;
  }
  if (parsed.positionals.length) throw new UsageError(`unexpected argument "${parsed.positionals[0]}"`);
  const value = flagOrEnv(parsed, "data-dir", process.env);
  return resolve(typeof value === "string" && value !== "" ? value : defaultDataDir(process.env));
}

function logLine(line: string): void {
  process.stderr.write(`${new Date().toISOString()} ${line}\n`);
}

export async function hostCommand(argv: string[]): Promise<number> {
  const dataDir = dataDirOf(argv, "host [--data-dir D]", "Run the session host of a data dir in the foreground (webmux serve starts one by itself).");
  if (dataDir === null) return 0;
  let exited!: (code: number) => void;
  const done = new Promise<number>((r) => (exited = r));
  const service = new HostedSessions(spawnPty, logLine);
  const host = new SessionHost({ dataDir, build: WEBMUX_BUILD, service, log: logLine, onExit: () => exited(0) });
  service.onChange = () => host.checkIdle("the last session ended and no server is connected");
  const started = await host.start();
  if (started.status === "running") {
    logLine(`another session host (pid ${started.pid}) already holds the sessions of ${dataDir}`);
    return 0;
  }
  // Detached from any terminal: a hang-up is not a reason to end sessions. An explicit TERM or INT is.
  process.on("SIGHUP", () => logLine("SIGHUP ignored"));
  const stop = (signal: string) => void host.stop(signal);
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
  return await done;
}

export async function stopCommand(argv: string[]): Promise<number> {
  const dataDir = dataDirOf(argv, "stop [--data-dir D]", "End every session of the data dir (SIGHUP, SIGKILL after 3 s) and its session host.");
  if (dataDir === null) return 0;
  let conn: HostConnection;
  try {
    conn = await HostConnection.connect(hostPaths(dataDir), { role: PeerRole.COMMAND, build: WEBMUX_BUILD });
  } catch (err) {
    if (err instanceof HostUnavailableError) {
      process.stdout.write(`webmux: no session host runs for ${dataDir}\n`);
      return 0;
    }
    throw err;
  }
  const closed = new Promise<void>((r) => conn.events.on("closed", () => r()));
  const { result } = await conn.request("stop");
  await closed;
  const deadline = Date.now() + STOP_EXIT_WAIT_MS;
  while (processExists(conn.welcome.pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const ended = (result as { ended?: number }).ended ?? 0;
  process.stdout.write(`webmux: ended ${ended} session${ended === 1 ? "" : "s"}; the session host (pid ${conn.welcome.pid}) exited\n`);
  return 0;
}
