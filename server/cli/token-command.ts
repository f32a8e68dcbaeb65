/** `webmux token create|list|revoke`: Agent API tokens (docs/agent-api.md § Tokens and capabilities, /api/tokens). */
import { CAPABILITIES, type Capability, type TokenInfo } from "../contract/types.ts";
import { WebmuxApi } from "./api-client.ts";
import { parseArgs, UsageError, type FlagSpec } from "./args.ts";
import { CLIENT_FLAGS, commandHelp, resolveClientOptions } from "./client-options.ts";
import { formatAge } from "./session-commands.ts";

/** Least privilege: a token that should type must say so. */
const DEFAULT_CAPABILITIES: Capability[] = ["terminal:read"];

const CREATE_FLAGS: FlagSpec[] = [
  { name: "name", kind: "string", help: "what the token is for (required)" },
  { name: "capabilities", kind: "string", help: `comma-separated: ${CAPABILITIES.join(", ")} (default terminal:read; terminal:write implies terminal:read)` },
  { name: "expires-in", kind: "string", help: "lifetime in seconds (default: never expires)" },
  { name: "json", kind: "boolean", help: "print the whole answer as JSON" },
];
const LIST_FLAGS: FlagSpec[] = [{ name: "json", kind: "boolean", help: "print the tokens as a JSON array" }];

const HELP = `usage: webmux token <create|list|revoke> [options]

  create --name N [--capabilities terminal:read,terminal:write] [--expires-in SECONDS]
         prints the new token (shown only once)
  list   [--json]
  revoke <token-id> …
`;

export async function tokenCommand(argv: string[]): Promise<number> {
  const [verb, ...rest] = argv;
  switch (verb) {
    case "create":
      return createToken(rest);
    case "list":
    case "ls":
      return listTokens(rest);
    case "revoke":
      return revokeTokens(rest);
    case undefined:
    case "help":
    case "--help":
    case "-h":
      process.stdout.write(HELP);
      return verb === undefined ? 2 : 0;
    default:
      throw new UsageError(`unknown token command "${verb}"; expected create, list or revoke`);
  }
}

export function parseCapabilities(raw: string): Capability[] {
  const names = raw.split(",").map((s) => s.trim()).filter(Boolean);
  if (names.length === 0) throw new UsageError("--capabilities needs at least one capability");
  for (const name of names) {
    if (!(CAPABILITIES as readonly string[]).includes(name)) throw new UsageError(`unknown capability "${name}"; known: ${CAPABILITIES.join(", ")}`);
  }
  return [...new Set(names)] as Capability[];
}

async function createToken(argv: string[]): Promise<number> {
  const parsed = parseArgs(argv, [...CREATE_FLAGS, ...CLIENT_FLAGS]);
  if (parsed.flags.get("help")) {
    process.stdout.write(commandHelp("token create --name N [options]", "Create an Agent API token and print it (it is shown only once).", CREATE_FLAGS));
    return 0;
  }
  const name = parsed.flags.get("name");
  if (typeof name !== "string" || name.trim() === "") throw new UsageError("--name is required");
  if (parsed.positionals.length) throw new UsageError(`unexpected argument "${parsed.positionals[0]}"`);
  const capsFlag = parsed.flags.get("capabilities");
  const capabilities = typeof capsFlag === "string" ? parseCapabilities(capsFlag) : DEFAULT_CAPABILITIES;
  const expiresFlag = parsed.flags.get("expires-in");
  let expiresIn: number | undefined;
  if (typeof expiresFlag === "string") {
    if (!/^[1-9]\d*$/.test(expiresFlag)) throw new UsageError(`--expires-in must be a positive number of seconds, got "${expiresFlag}"`);
    expiresIn = Number(expiresFlag);
  }
  const api = new WebmuxApi(resolveClientOptions(parsed, process.env));
  const created = await api.createToken({ name, capabilities, ...(expiresIn !== undefined ? { expires_in: expiresIn } : {}) });
  if (parsed.flags.get("json")) {
    process.stdout.write(JSON.stringify(created, null, 2) + "\n");
  } else {
    process.stdout.write(`${created.token}\n`);
    process.stderr.write(`webmux: token ${created.token_info.id} (${created.token_info.capabilities.join(", ")}) created; it is shown only this once\n`);
  }
  return 0;
}

async function listTokens(argv: string[]): Promise<number> {
  const parsed = parseArgs(argv, [...LIST_FLAGS, ...CLIENT_FLAGS]);
  if (parsed.flags.get("help")) {
    process.stdout.write(commandHelp("token list [--json]", "List Agent API tokens (never their secrets).", LIST_FLAGS));
    return 0;
  }
  const tokens = await new WebmuxApi(resolveClientOptions(parsed, process.env)).listTokens();
  process.stdout.write(parsed.flags.get("json") ? JSON.stringify(tokens, null, 2) + "\n" : formatTokenTable(tokens, Date.now()));
  return 0;
}

async function revokeTokens(argv: string[]): Promise<number> {
  const parsed = parseArgs(argv, CLIENT_FLAGS);
  if (parsed.flags.get("help")) {
    process.stdout.write(commandHelp("token revoke <token-id> …", "Revoke Agent API tokens: they stop working at once.", []));
    return 0;
  }
  if (parsed.positionals.length === 0) throw new UsageError("which token? usage: webmux token revoke <token-id> …");
  const api = new WebmuxApi(resolveClientOptions(parsed, process.env));
  for (const id of parsed.positionals) await api.revokeToken(id);
  return 0;
}

/** `created_at` and friends: the Agent API (docs/agent-api.md) uses seconds or ms; values below 1e12 are seconds. */
function toMs(t: number): number {
  return t < 1e12 ? t * 1000 : t;
}

export function formatTokenTable(tokens: TokenInfo[], now: number): string {
  if (tokens.length === 0) return "no tokens (create one with `webmux token create --name NAME`)\n";
  const rows = [
    ["ID", "NAME", "CAPABILITIES", "CREATED", "EXPIRES", "LAST USED"],
    ...tokens.map((t) => [
      t.id,
      t.name,
      t.capabilities.join(","),
      `${formatAge(now - toMs(t.created_at))} ago`,
      t.expires_at === null ? "never" : toMs(t.expires_at) <= now ? "expired" : `in ${formatAge(toMs(t.expires_at) - now)}`,
      t.last_used_at === null ? "never" : `${formatAge(now - toMs(t.last_used_at))} ago`,
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => Array.from(r[i]!).length)));
  return rows.map((r) => r.map((cell, i) => cell.padEnd(widths[i]!)).join("  ").trimEnd()).join("\n") + "\n";
}
