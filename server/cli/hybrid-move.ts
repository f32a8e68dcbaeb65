/**
 * Moving a hybrid session's conversation between its ends (docs/hybrid.md § Moving) for `webmux move` and
 * `webmux attach --take`: the move route, and what to tell the user when it did not happen.
 */
import type { HybridEnd, SessionInfo } from "../contract/types.ts";
import type { WebmuxApi } from "./api-client.ts";
import { CliError, DEFAULT_URL, type ClientOptions } from "./client-options.ts";

/**
 * Exit status when the agent is mid-turn and the move was refused (409 BUSY): distinct from 1
 * (an error) and 2 (usage), so a script can retry with --interrupt or wait.
 */
export const EXIT_BUSY = 3;

export type MoveResult = { moved: true; info: SessionInfo } | { moved: false; exitCode: number };

/** ` --url U` when the server is not the default one, for commands we suggest. */
export function urlArgument(options: ClientOptions): string {
  return options.url === DEFAULT_URL ? "" : ` --url ${options.url}`;
}

/**
 * Move `id` to `to`. A refusal because the agent is busy, or a move that ended elsewhere (the
 * target end failed to start and the server parked it at the chat end), is explained on stderr.
 */
export async function moveConversation(
  api: WebmuxApi,
  options: ClientOptions,
  id: string,
  to: HybridEnd,
  interrupt: boolean,
  say: (line: string) => void,
): Promise<MoveResult> {
  let info: SessionInfo;
  try {
    info = await api.moveSession(id, to, interrupt);
  } catch (err) {
    if (!(err instanceof CliError) || err.code !== "BUSY") throw err;
    // The server's message leads with what the agent is doing ("the agent is busy; …").
    const doing = err.message.split(";")[0]!.trim() || "the agent is busy";
    say(
      `session ${id} was not moved: ${doing}. Pass --interrupt to stop its turn and move anyway: ` +
        `webmux move${urlArgument(options)} ${id} ${to} --interrupt`,
    );
    return { moved: false, exitCode: EXIT_BUSY };
  }
  const hybrid = info.hybrid;
  if (!hybrid) throw new CliError("BAD_RESPONSE", `the server moved ${id} but its answer has no hybrid field`);
  if (hybrid.end !== to) {
    say(`session ${id} did not reach the ${to} end: ${hybrid.error ?? "unknown reason"}; it is ${hybrid.state} at the ${hybrid.end} end`);
    return { moved: false, exitCode: 1 };
  }
  return { moved: true, info };
}
