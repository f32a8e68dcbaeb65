/**
 * A small argv parser: `--name value`, `--name=value`, boolean `--flag`, and `--` ending options.
 * Flags may also be read from `WEBMUX_<NAME>` (flag wins): every serve flag, and a client
 * command's --url, --token and --data-dir; help names the variable where one is read.
 */
export type FlagSpec = {
  name: string;
  kind: "string" | "boolean";
  help: string;
  short?: string;
  /**
   * Whether help names `WEBMUX_<NAME>`: false, argv only; true, the command reads the variable too.
   * Unset: serve flags and the client flags are read from the environment, a command's own are not.
   */
  env?: boolean;
};

export class UsageError extends Error {}

export type ParsedArgs = { flags: Map<string, string | boolean>; positionals: string[]; rest: string[] };

export function parseArgs(argv: string[], specs: FlagSpec[]): ParsedArgs {
  const byName = new Map(specs.map((s) => [s.name, s]));
  const byShort = new Map(specs.filter((s) => s.short).map((s) => [s.short!, s]));
  const flags = new Map<string, string | boolean>();
  const positionals: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") return { flags, positionals, rest: argv.slice(i + 1) };
    let spec: FlagSpec | undefined;
    let inline: string | undefined;
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
      inline = eq === -1 ? undefined : arg.slice(eq + 1);
      spec = byName.get(name);
      if (!spec) throw new UsageError(`unknown option --${name}`);
    } else if (arg.startsWith("-") && arg.length === 2) {
      spec = byShort.get(arg.slice(1));
      if (!spec) throw new UsageError(`unknown option ${arg}`);
    } else {
      positionals.push(arg);
      continue;
    }
    if (spec.kind === "boolean") {
      if (inline !== undefined && !["true", "false", "1", "0"].includes(inline)) {
        throw new UsageError(`--${spec.name} takes no value`);
      }
      flags.set(spec.name, inline === undefined || inline === "true" || inline === "1");
    } else {
      const value = inline ?? argv[++i];
      if (value === undefined) throw new UsageError(`--${spec.name} needs a value`);
      flags.set(spec.name, value);
    }
  }
  return { flags, positionals, rest: [] };
}

/** `WEBMUX_BUFFER_BYTES` for `buffer-bytes`. */
export function envName(flag: string): string {
  return "WEBMUX_" + flag.toUpperCase().replace(/-/g, "_");
}

export function flagOrEnv(
  parsed: ParsedArgs,
  name: string,
  env: NodeJS.ProcessEnv,
): string | boolean | undefined {
  const fromFlag = parsed.flags.get(name);
  if (fromFlag !== undefined) return fromFlag;
  return env[envName(name)];
}

/** Flags and their help line up in one column, at least this far in. */
const USAGE_HELP_COLUMN = 28;

export function usage(specs: FlagSpec[]): string {
  const flags = specs.map((s) => `  --${s.name}${s.kind === "string" ? " <value>" : ""}`);
  // A flag longer than the column pushes the whole column right, so no help runs into its flag.
  const column = Math.max(USAGE_HELP_COLUMN, ...flags.map((f) => f.length + 2));
  return specs.map((s, i) => flags[i]!.padEnd(column) + s.help + (s.env === false ? "" : ` [${envName(s.name)}]`)).join("\n");
}
