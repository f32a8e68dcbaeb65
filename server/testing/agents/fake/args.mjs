// The command-line contract of the fake Claude Code: the flags webmux uses (and a few more), with
// the real program's refusals, so a webmux that builds a wrong command line fails here as it would
// against the real one.

const VALUE_FLAGS = new Map([
  ["--input-format", "inputFormat"],
  ["--output-format", "outputFormat"],
  ["--resume", "resume"],
  ["-r", "resume"],
  ["--session-id", "sessionId"],
  ["--settings", "settings"],
  ["--permission-prompt-tool", "permissionPromptTool"],
  ["--permission-mode", "permissionMode"],
  ["--model", "model"],
]);
const BOOLEAN_FLAGS = new Map([
  ["-p", "print"],
  ["--print", "print"],
  ["--verbose", "verbose"],
  ["--include-partial-messages", "includePartialMessages"],
  ["--replay-user-messages", "replayUserMessages"],
  ["--fork-session", "forkSession"],
  ["-c", "continue"],
  ["--continue", "continue"],
  ["-v", "version"],
  ["--version", "version"],
  ["-h", "help"],
  ["--help", "help"],
]);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A refusal: the message the real program prints and its exit status. */
export class UsageError extends Error {
  constructor(message, status) {
    super(message);
    this.status = status;
  }
}

/** Parse argv (without node and the script) into options; throws UsageError. */
export function parseArgs(argv) {
  const options = { positional: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--") {
      options.positional.push(...argv.slice(i + 1));
      break;
    }
    const eq = arg.startsWith("--") ? arg.indexOf("=") : -1;
    const name = eq === -1 ? arg : arg.slice(0, eq);
    if (VALUE_FLAGS.has(name)) {
      const value = eq === -1 ? argv[++i] : arg.slice(eq + 1);
      if (value === undefined) throw new UsageError(`error: option '${name} <value>' argument missing`, 1);
      options[VALUE_FLAGS.get(name)] = value;
    } else if (BOOLEAN_FLAGS.has(name) && eq === -1) {
      options[BOOLEAN_FLAGS.get(name)] = true;
    } else if (arg.startsWith("-") && arg !== "-") {
      throw new UsageError(`error: unknown option '${arg}'`, 1);
    } else options.positional.push(arg);
  }
  validate(options);
  return options;
}

function validate(o) {
  if (o.sessionId !== undefined && (o.resume !== undefined || o.continue) && !o.forkSession) {
    throw new UsageError("Error: --session-id can only be used with --continue or --resume if --fork-session is also specified.", 1);
  }
  if (o.sessionId !== undefined && !UUID.test(o.sessionId)) throw new UsageError("Error: Invalid session ID. Must be a valid UUID.", 1);
  const outputFormat = o.outputFormat ?? "text";
  const inputFormat = o.inputFormat ?? "text";
  if (!["text", "json", "stream-json"].includes(outputFormat)) throw new UsageError(`error: option '--output-format <format>' argument '${outputFormat}' is invalid.`, 1);
  if (!["text", "stream-json"].includes(inputFormat)) throw new UsageError(`error: option '--input-format <format>' argument '${inputFormat}' is invalid.`, 1);
  if (o.print && outputFormat === "stream-json" && !o.verbose) {
    throw new UsageError("Error: When using --print, --output-format=stream-json requires --verbose", 1);
  }
  if (inputFormat === "stream-json" && outputFormat !== "stream-json") {
    throw new UsageError("Error: --input-format=stream-json requires output-format=stream-json.", 1);
  }
  if (o.includePartialMessages && (!o.print || outputFormat !== "stream-json")) {
    throw new UsageError("Error: --include-partial-messages requires --print and --output-format=stream-json.", 1);
  }
  if (o.permissionPromptTool !== undefined && !o.print) {
    throw new UsageError("Error: --permission-prompt-tool can only be used with --print", 1);
  }
}
