/** `webmux move <id> terminal|chat [--interrupt] [--attach]`: take a hybrid session's conversation to one of its ends. */
import type { HybridEnd } from "../contract/types.ts";
import { WebmuxApi } from "./api-client.ts";
import { parseArgs, UsageError, type FlagSpec } from "./args.ts";
import { attachAndReport, DETACH_FLAG } from "./attach-command.ts";
import { CLIENT_FLAGS, commandHelp, resolveClientOptions } from "./client-options.ts";
import { EXIT_BUSY, moveConversation } from "./hybrid-move.ts";

const MOVE_FLAGS: FlagSpec[] = [
  { name: "interrupt", kind: "boolean", help: "stop the agent's turn if it is working (else a busy agent refuses the move)" },
  { name: "attach", kind: "boolean", help: "with terminal: attach this terminal afterwards, taking control" },
  DETACH_FLAG,
];

export async function moveCommand(argv: string[]): Promise<number> {
  const parsed = parseArgs(argv, [...MOVE_FLAGS, ...CLIENT_FLAGS]);
  if (parsed.flags.get("help")) {
    process.stdout.write(
      commandHelp(
        "move <id> terminal|chat [--interrupt] [--attach]",
        "Move a hybrid session's conversation to its terminal end (the agent's TUI) or its chat end\n" +
          "(the chat view), and print where it is now. Exits 0 when moved, 1 on an error (the target end\n" +
          `failed to start: the session stays parked at the chat end), ${EXIT_BUSY} when the agent is busy and\n` +
          "--interrupt was not given. With --attach, once moved, the status is the attach's.",
        MOVE_FLAGS,
      ),
    );
    return 0;
  }
  const [id, to, extra] = parsed.positionals;
  if (!id || !to) throw new UsageError("usage: webmux move <id> terminal|chat [--interrupt] [--attach]");
  if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"`);
  if (to !== "terminal" && to !== "chat") throw new UsageError(`move where? "terminal" or "chat", not "${to}"`);
  const attach = parsed.flags.get("attach") === true;
  if (attach && to !== "terminal") throw new UsageError("--attach goes with terminal: the chat end is shown in the browser");
  const options = resolveClientOptions(parsed, process.env);
  const moved = await moveConversation(new WebmuxApi(options), options, id, to satisfies HybridEnd, parsed.flags.get("interrupt") === true, (line) =>
    process.stderr.write(`webmux move: ${line}\n`),
  );
  if (!moved.moved) return moved.exitCode;
  if (attach) return attachAndReport(options, id, parsed, true);
  const { end, state } = moved.info.hybrid!;
  process.stdout.write(`${id} is at the ${end} end (${state})\n`);
  return 0;
}
