import { join } from "node:path";
import { buildClientIfNeeded } from "./build-client.ts";
import { parseServeConfig, SERVE_FLAGS } from "./serve-config.ts";
import { usage } from "./args.ts";
import { exposureWarning, localLoginLink, loginQrCode, phoneLoginLink, type BannerInput } from "./serve-banner.ts";
import { inspect } from "node:util";
import { TERMINATE_GRACE_MS } from "../pty/terminate.ts";
import { CLIENT_DIST, StartupError, startWebmux, type Webmux } from "../server.ts";

/** A second Ctrl-C within this window skips the graceful shutdown. */
const FORCE_EXIT_WINDOW_MS = 5_000;
/** The exit status after an uncaught exception (EX_SOFTWARE): not 1 (start errors) or 2 (usage); a supervisor restarts on it. */
export const CRASH_EXIT_CODE = 70;
/** How long a crashing server waits for its sessions to end: SIGKILL follows SIGHUP after TERMINATE_GRACE_MS. */
const CRASH_DEADLINE_MS = TERMINATE_GRACE_MS + 2_000;

/**
 * The process-level last line of defence (docs/design.md, Hardening and limits): an exception or
 * rejection nothing caught is logged with its stack, every session's program is ended (SIGHUP,
 * then SIGKILL) so none is orphaned — unless the sessions run in the session host, where they keep
 * running for the next server — and the process exits non-zero for a supervisor to restart it.
 * It is a backstop, not error handling: whatever reaches it is a bug to fix where it arose.
 */
function installLastLineOfDefence(server: Webmux, keepsSessions: () => boolean, dataDir: string): void {
  let crashing = false;
  const crash = (what: string, err: unknown) => {
    process.stderr.write(`webmux: ${what}: ${err instanceof Error ? (err.stack ?? err.message) : inspect(err)}\n`);
    if (crashing) return;
    crashing = true;
    process.exitCode = CRASH_EXIT_CODE;
    process.stderr.write(
      keepsSessions()
        ? `webmux: exiting; ${keptSessionsLine(runningSessions(server), dataDir)}\n`
        : "webmux: ending every session (SIGHUP, then SIGKILL) and exiting\n",
    );
    setTimeout(() => process.exit(CRASH_EXIT_CODE), CRASH_DEADLINE_MS);
    server.abort().finally(() => process.exit(CRASH_EXIT_CODE));
  };
  process.on("uncaughtException", (err) => crash("uncaught exception", err));
  process.on("unhandledRejection", (reason) => crash("unhandled rejection", reason));
}

function runningSessions(server: Webmux): number {
  return server.registry.list().filter((x) => x.status === "running").length;
}

/** What a server that leaves its sessions in the session host says on exit. */
export function keptSessionsLine(kept: number, dataDir: string): string {
  if (kept === 0) return "no session keeps running";
  const what = kept === 1 ? "1 session keeps" : `${kept} sessions keep`;
  return `${what} running in the session host; end ${kept === 1 ? "it" : "them"} with: webmux stop --data-dir ${dataDir}`;
}

export async function serveCommand(argv: string[]): Promise<number> {
  const config = parseServeConfig(argv, process.env);
  if (config.help) {
    process.stdout.write(`usage: webmux serve [options]\n\n${usage(SERVE_FLAGS)}\n`);
    return 0;
  }
  if (config.buildIfNeeded) buildClientIfNeeded(CLIENT_DIST);
  let server;
  try {
    server = await startWebmux(config);
  } catch (err) {
    if (err instanceof StartupError) {
      process.stderr.write(`webmux: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
  const running = server;
  // docs/design.md, What survives a restart: sessions in the host outlive this process, however it ends.
  const keepsSessions = () => running.hostLink !== null && !running.hostLink.isLost && !config.stopSessionsOnExit;
  installLastLineOfDefence(server, keepsSessions, config.dataDir);
  // Handlers first: whoever reads the listening line may send SIGTERM at once.
  const stopped = new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) {
        process.stderr.write(`webmux: ${signal} again, exiting now\n`);
        process.exit(130);
      }
      stopping = true;
      const keeping = keepsSessions();
      const kept = keeping ? runningSessions(server) : 0;
      process.stderr.write(keeping ? `webmux: ${signal}, closing…\n` : `webmux: ${signal}, ending sessions…\n`);
      setTimeout(() => process.exit(1), FORCE_EXIT_WINDOW_MS * 2).unref();
      server.close().then(
        () => {
          // docs/design.md, What survives a restart: the next `webmux serve` on this data dir takes them over.
          if (keeping) process.stderr.write(`webmux: ${keptSessionsLine(kept, config.dataDir)}\n`);
          resolve(0);
        },
        (err) => {
          process.stderr.write(`webmux: shutdown failed: ${(err as Error).message}\n`);
          resolve(1);
        },
      );
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  process.stdout.write(`listening on ${server.url}\n`);
  const banner: BannerInput = { url: server.url, host: server.host, token: server.token, tls: config.tls !== null, trustProxy: config.trustProxy };
  // One write: a reader of the pipe gets the start-up lines together, so whoever sees the login
  // line has also seen the warnings (separate writes may arrive in separate reads).
  const startup = [loginLine(banner, config.token !== null, config.dataDir)];
  if (server.tokenGenerated) startup.push(`webmux: a new global token was stored in ${config.dataDir}/global-token.json`);
  const warning = exposureWarning(banner);
  if (warning) startup.push(warning);
  process.stderr.write(`${startup.join("\n")}\n`);
  // The QR holds the token: only a terminal a person looks at may show it, never a pipe into a log.
  if (config.qr && process.stdout.isTTY) {
    try {
      process.stdout.write(await loginQrCode(phoneLoginLink(banner)));
    } catch (err) {
      process.stderr.write(`webmux: cannot draw the login QR code: ${(err as Error).message}\n`);
    }
  }
  return await stopped;
}

/**
 * How to log in. The link holds the token, so it is shown only on a terminal a person looks at;
 * stderr into a pipe or a log file (a service manager's journal) says where the token is instead.
 */
function loginLine(banner: BannerInput, tokenGiven: boolean, dataDir: string): string {
  const link = localLoginLink(banner);
  if (process.stderr.isTTY) return `webmux: open ${link} to log in`;
  const where = tokenGiven ? "the token given with --token (or WEBMUX_TOKEN)" : `the token kept in ${join(dataDir, "global-token.json")}`;
  return `webmux: open ${new URL(link).origin}/ and paste ${where} to log in`;
}
