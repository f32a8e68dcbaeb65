import { buildClientIfNeeded } from "./build-client.ts";
import { parseServeConfig, SERVE_FLAGS } from "./serve-config.ts";
import { usage } from "./args.ts";
import { CLIENT_DIST, StartupError, startWebmux } from "../server.ts";

/** A second Ctrl-C within this window skips the graceful shutdown. */
const FORCE_EXIT_WINDOW_MS = 5_000;

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
  process.stdout.write(`listening on ${server.url}\n`);
  const shown = server.host === "0.0.0.0" || server.host === "::" ? server.url.replace(/\/\/[^/]+:/, "//127.0.0.1:") : server.url;
  process.stderr.write(`webmux: open ${shown}/?token=${encodeURIComponent(server.token)} to log in\n`);
  if (server.tokenGenerated) process.stderr.write(`webmux: a new global token was stored in ${config.dataDir}/global-token.json\n`);
  if (!["127.0.0.1", "localhost", "::1"].includes(server.host)) {
    process.stderr.write(`webmux: warning: listening on ${server.host}, reachable beyond this machine over plain HTTP\n`);
  }

  return await new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) {
        process.stderr.write(`webmux: ${signal} again, exiting now\n`);
        process.exit(130);
      }
      stopping = true;
      process.stderr.write(`webmux: ${signal}, ending sessions…\n`);
      setTimeout(() => process.exit(1), FORCE_EXIT_WINDOW_MS * 2).unref();
      server.close().then(
        () => resolve(0),
        (err) => {
          process.stderr.write(`webmux: shutdown failed: ${(err as Error).message}\n`);
          resolve(1);
        },
      );
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}
