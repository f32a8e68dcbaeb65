import { UsageError } from "./cli/args.ts";
import { serveCommand } from "./cli/serve.ts";

const HELP = `webmux — terminal sessions that stay alive, driven from anywhere

usage: webmux <command> [options]

commands:
  serve     run the server (webmux serve --help for its options)
`;

type Command = (argv: string[]) => Promise<number>;
const COMMANDS: Record<string, Command> = { serve: serveCommand };

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
