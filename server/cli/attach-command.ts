/** `webmux attach <id>` and `webmux run [--title T] -- cmd …`. */
import { WebmuxApi } from "./api-client.ts";
import { flagOrEnv, parseArgs, UsageError, type FlagSpec, type ParsedArgs } from "./args.ts";
import { AttachClient, type AttachOutcome } from "./attach-client.ts";
import { CLIENT_FLAGS, commandHelp, isLocalUrl, resolveClientOptions, type ClientOptions } from "./client-options.ts";
import { DEFAULT_DETACH_KEY, parseDetachKey } from "./detach-key.ts";
import { moveConversation, urlArgument } from "./hybrid-move.ts";
import { LocalTerminal } from "./local-terminal.ts";
import { createRequest } from "./session-commands.ts";

export const DETACH_FLAG: FlagSpec = {
  name: "detach-key",
  kind: "string",
  help: `key that detaches: ctrl-X, ^X or none (default ${DEFAULT_DETACH_KEY})`,
  env: true,
};
const ATTACH_FLAGS: FlagSpec[] = [
  DETACH_FLAG,
  {
    name: "take",
    kind: "boolean",
    help: "take control at once (your size applies even while another client controls); a hybrid session at its chat end is moved here first",
  },
];
const RUN_FLAGS: FlagSpec[] = [
  { name: "title", kind: "string", help: "title shown in the session list" },
  { name: "cwd", kind: "string", help: "working directory (default: this one, when the server is local)" },
  DETACH_FLAG,
];

/** Signals that end the CLI (its terminal went away, or it was told to stop), with their numbers for the 128+n status. */
const ENDING_SIGNALS: [NodeJS.Signals, number][] = [
  ["SIGHUP", 1],
  ["SIGINT", 2],
  ["SIGTERM", 15],
];

export async function attachCommand(argv: string[]): Promise<number> {
  const parsed = parseArgs(argv, [...ATTACH_FLAGS, ...CLIENT_FLAGS]);
  if (parsed.flags.get("help")) {
    process.stdout.write(
      commandHelp(
        "attach <id> [--take] [--detach-key KEY]",
        "Attach this terminal to a session: watch it, type to take control, detach with the detach key.\n" +
          "Exits 0 when detached or when the session moved; with the program's status when it exited;\n" +
          "1 when the session is gone (killed, or the server restarted without it);\n" +
          "3 when --take found a hybrid session's agent busy at the chat end (see webmux move --interrupt).",
        ATTACH_FLAGS,
      ),
    );
    return 0;
  }
  const [id, extra] = parsed.positionals;
  if (!id) throw new UsageError("which session? usage: webmux attach <id> (webmux ls lists them)");
  if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"`);
  const options = resolveClientOptions(parsed, process.env);
  const api = new WebmuxApi(options);
  // Fails clearly (server not running, 401, unknown id) before the terminal is switched to raw mode.
  const info = await api.getSession(id);
  const take = parsed.flags.get("take") === true;
  if (take && info.hybrid?.end === "chat") {
    // Taking a hybrid session is taking its conversation: bring it to its terminal end (an explicit move, docs/hybrid.md § Moving).
    const moved = await moveConversation(api, options, id, "terminal", false, (line) => process.stderr.write(`webmux attach: ${line}\n`));
    if (!moved.moved) return moved.exitCode;
  }
  return attachAndReport(options, id, parsed, take);
}

/** Attach to an existing session until it ends, moves or the user detaches; the exit status to return. */
export async function attachAndReport(options: ClientOptions, id: string, parsed: ParsedArgs, take: boolean): Promise<number> {
  const outcome = await attach(options, id, parsed, { takeControl: take });
  return report(outcome, id, options, false);
}

export async function runCommand(argv: string[]): Promise<number> {
  const parsed = parseArgs(argv, [...RUN_FLAGS, ...CLIENT_FLAGS]);
  if (parsed.flags.get("help")) {
    process.stdout.write(
      commandHelp(
        "run [--title T] [--cwd D] -- command …",
        "Start a session running the command and attach to it. Exits with the program's status;\n" +
          "detaching leaves it running.",
        RUN_FLAGS,
      ),
    );
    return 0;
  }
  if (parsed.positionals.length) throw new UsageError(`unexpected argument "${parsed.positionals[0]}" (put the command after --)`);
  if (parsed.rest.length === 0) throw new UsageError("what to run? usage: webmux run -- command …");
  const options = resolveClientOptions(parsed, process.env);
  const request = createRequest(parsed.rest, parsed.flags.get("title"), parsed.flags.get("cwd"), isLocalUrl(options.url));
  const session = await new WebmuxApi(options).createSession(request);
  const outcome = await attach(options, session.id, parsed, { freshSession: true });
  return report(outcome, session.id, options, true);
}

async function attach(
  options: ClientOptions,
  sessionId: string,
  parsed: ParsedArgs,
  how: { freshSession?: boolean; takeControl?: boolean },
): Promise<AttachOutcome> {
  const keyFlag = flagOrEnv(parsed, "detach-key", process.env);
  const detachKey = parseDetachKey(typeof keyFlag === "string" ? keyFlag : DEFAULT_DETACH_KEY);
  const client = new AttachClient({ url: options.url, token: options.token, sessionId, terminal: new LocalTerminal(), detachKey, ...how });
  const handlers = ENDING_SIGNALS.map(([signal]) => {
    const handler = () => client.stop({ kind: "signal", signal });
    process.on(signal, handler);
    return [signal, handler] as const;
  });
  try {
    return await client.run();
  } finally {
    for (const [signal, handler] of handlers) process.off(signal, handler);
  }
}

/** What happened, on stderr (stdout belongs to the session), and the exit status. */
function report(outcome: AttachOutcome, id: string, options: ClientOptions, ran: boolean): number {
  const say = (line: string) => process.stderr.write(`\r\nwebmux: ${line}\r\n`);
  switch (outcome.kind) {
    case "detached":
      say(`detached from ${id}; it keeps running. Re-attach with: webmux attach${urlArgument(options)} ${id}`);
      return 0;
    case "exited":
      if (!ran) say(`session ${id} has exited with status ${outcome.exitCode}`);
      return toExitStatus(outcome.exitCode);
    case "moved":
      say(movedMessage(id, outcome.reason, options));
      return 0;
    case "not_found":
      say(`session ${id} is gone (${outcome.reason})`);
      return 1;
    case "refused":
      say(outcome.status === 401 ? "the server refused the token (401)" : `the server refused to attach (${outcome.status}): this token may not read terminals`);
      return 1;
    case "signal":
      return 128 + (ENDING_SIGNALS.find(([s]) => s === outcome.signal)?.[1] ?? 0);
  }
}

/** Where a session that closed with 4409 went, and how to bring it back here. */
function movedMessage(id: string, reason: string, options: ClientOptions): string {
  const end = /^session moved: (\S+)$/.exec(reason)?.[1];
  if (end !== "chat") return `detached: ${reason}`;
  return (
    `detached: session ${id} moved to its chat end; continue it in the browser, or bring it back here with: ` +
    `webmux move${urlArgument(options)} ${id} terminal --attach`
  );
}

/** A POSIX exit status: 0–255 as is; anything else (an unknown -1) is a plain failure. */
function toExitStatus(code: number): number {
  return Number.isInteger(code) && code >= 0 && code <= 255 ? code : 1;
}
