import { UsageError } from "./cli/args.ts";
import { serveCommand } from "./cli/serve.ts";
import { hostCommand, stopCommand } from "./cli/host-command.ts";
import { attachCommand, runCommand } from "./cli/attach-command.ts";
import { moveCommand } from "./cli/move-command.ts";
import { killCommand, lsCommand, newCommand } from "./cli/session-commands.ts";
import { tokenCommand } from "./cli/token-command.ts";

const HELP = `webmux — terminal sessions that stay alive, driven from anywhere

usage: webmux <command> [options]

commands:
  serve     run the server (it starts the session host, which keeps sessions across its restarts)
  stop      end every session and the session host: webmux stop [--data-dir D]
  host      run the session host in the foreground (serve starts it by itself)
  ls        list sessions (--json for a JSON array)
  new       start a session and print its id: webmux new [--title T] [--cwd D] [-- command …]
            or a hybrid agent session: webmux new --agent claude [--conversation ID]
  attach    attach this terminal to a session: webmux attach [--take] <id> (Ctrl-\\ detaches)
  move      move a hybrid session's conversation: webmux move <id> terminal|chat [--interrupt]
  run       start a command in a new session and attach: webmux run -- command …
  kill      end sessions: webmux kill <id> …
  token     Agent API tokens: webmux token create|list|revoke

Every command takes --help. Client commands find the server with --url (WEBMUX_URL, default
http://127.0.0.1:8999) and authenticate with --token (WEBMUX_TOKEN, default: the token a local
server keeps in its data dir).
`;

type Command = (argv: string[]) => Promise<number>;
const COMMANDS: Record<string, Command> = {
  serve: serveCommand,
  stop: stopCommand,
  host: hostCommand,
  ls: lsCommand,
  new: newCommand,
  attach: attachCommand,
  move: moveCommand,
  run: runCommand,
  kill: killCommand,
  token: tokenCommand,
};

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === "help" || name === "--help" || name === "-h") {
    process.stdout.write(HELP);
    return name ? 0 : 2;
  }
  const command = COMMANDS[name];
  if (!command) {
    process.stderr.write(`webmux: unknown command "${name}"\n\n${HELP}`);
    return 2;
  }
  try {
    return await command(rest);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`webmux ${name}: ${err.message}\n`);
      return 2;
    }
    process.stderr.write(`webmux ${name}: ${(err as Error).message}\n`);
    return 1;
  }
}

/** Run as a process: exit with the command's status. */
export function runMain(argv: string[]): void {
  main(argv).then(
    (code) => process.exit(code),
    (err) => {
      process.stderr.write(`webmux: ${(err as Error).stack ?? err}\n`);
      process.exit(1);
    },
  );
}

// `bun server/main.ts …` runs this file directly; under Node, bin/webmux.js calls runMain.
if ((import.meta as { main?: boolean }).main) runMain(process.argv.slice(2));
