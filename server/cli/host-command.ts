/**
 * `webmux host` runs the session host of a data dir in the foreground (servers start it detached
 * by themselves); `webmux stop` ends every session of a data dir and its host.
 * docs/design.md, What survives a restart.
 */
import { resolve } from "node:path";
import { SPOKEN_HOST_PROTOCOL, WEBMUX_BUILD } from "../host/build.ts";
import { HostConnection, HostUnavailableError } from "../host/host-client.ts";
import { hostPaths, processExists, readSecret } from "../host/host-dir.ts";
import { fdPassingSupported } from "../host/fd-channel.ts";
import { PeerRole } from "../host/protocol.ts";
import { HostedSessions } from "../host/hosted-sessions.ts";
import { SessionHost } from "../host/session-host.ts";
import { handOver, takeOver, type TakenOver } from "../host/successor.ts";
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

const SUCCESSOR_FLAG: FlagSpec = {
  name: "successor",
  kind: "boolean",
  help: "take the sessions over from the session host that started this one (it hands them over on fd 3)",
  env: false,
};

function parseHostArgs(argv: string[], usageLine: string, description: string, flags: FlagSpec[] = HOST_FLAGS): { dataDir: string; successor: boolean } | null {
  const parsed = parseArgs(argv, flags);
  if (parsed.flags.get("help")) {
    process.stdout.write(commandHelp(usageLine, description, flags.filter((f) => f.name !== "help")));
    return null;
  }
  if (parsed.positionals.length) throw new UsageError(`unexpected argument "${parsed.positionals[0]}"`);
  const value = flagOrEnv(parsed, "data-dir", process.env);
  return { dataDir: resolve(typeof value === "string" && value !== "" ? value : defaultDataDir(process.env)), successor: parsed.flags.get("successor") === true };
}

function dataDirOf(argv: string[], usageLine: string, description: string): string | null {
  return parseHostArgs(argv, usageLine, description)?.dataDir ?? null;
}

function logLine(line: string): void {
  process.stderr.write(`${new Date().toISOString()} ${line}\n`);
}

export async function hostCommand(argv: string[]): Promise<number> {
  const args = parseHostArgs(argv, "host [--data-dir D]", "Run the session host of a data dir in the foreground (webmux serve starts one by itself).", [...HOST_FLAGS, SUCCESSOR_FLAG]);
  if (args === null) return 0;
  const { dataDir } = args;
  let exited!: (code: number) => void;
  const done = new Promise<number>((r) => (exited = r));
  const service = new HostedSessions(spawnPty, logLine);
  const host: SessionHost = new SessionHost({
    dataDir,
    build: WEBMUX_BUILD,
    service,
    log: logLine,
    onExit: () => {
      service.stopStreams();
      exited(0);
    },
    // docs/design.md, What survives a restart: a build of another host protocol takes the sessions over.
    handover: (successor) => handOver(successor, service, { build: WEBMUX_BUILD, protocol: SPOKEN_HOST_PROTOCOL, pid: process.pid, hostId: host.id }, hostPaths(dataDir), logLine),
  });
  service.onChange = () => host.checkIdle("the last session ended and no server is connected");
  if (args.successor) {
    let taken: TakenOver;
    try {
      taken = await takeOver(service, logLine);
    } catch (err) {
      logLine(`cannot take the sessions over: ${(err as Error).message}`);
      return 1;
    }
    try {
      await host.start({ successor: true });
    } catch (err) {
      taken.fail(`cannot listen: ${(err as Error).message}`);
      logLine(`cannot listen: ${(err as Error).message}`);
      return 1;
    }
    taken.begin();
    taken.confirm();
    logLine(`took ${taken.sessions} session(s) over from ${taken.from.build} (pid ${taken.from.pid}, host protocol ${taken.from.protocol})`);
  } else {
    const started = await host.start();
    if (started.status === "running") {
      const who = started.pid > 0 ? `pid ${started.pid}` : "it took the connection but did not answer: busy or stopped";
      logLine(`another session host (${who}) already holds the sessions of ${dataDir}`);
      return 0;
    }
  }
  // docs/design.md § The session host serves the streams: where descriptors can be handed (Node on
  // Linux), the server hands upgraded terminal streams here; elsewhere it relays them.
  if (fdPassingSupported()) {
    const paths = hostPaths(dataDir);
    try {
      service.serveStreams(paths.streams, () => readSecret(paths));
    } catch (err) {
      logLine(`terminal streams stay with the server: cannot listen on ${paths.streams}: ${(err as Error).message}`);
    }
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
