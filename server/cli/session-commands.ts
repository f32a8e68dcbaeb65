/** `webmux ls`, `webmux new` and `webmux kill`: the session list over HTTP. */
import { resolve } from "node:path";
import type { CreateSessionRequest, HybridEnd, SessionInfo } from "../contract/types.ts";
import { WebmuxApi, type CreateHybridSessionRequest } from "./api-client.ts";
import { flagOrEnv, parseArgs, UsageError, type FlagSpec } from "./args.ts";
import { CLIENT_FLAGS, CliError, commandHelp, DEFAULT_URL, isLocalUrl, normaliseUrl, resolveClientOptions } from "./client-options.ts";
import { listHostSessions, NoHostError, type HostListedSession } from "./host-list.ts";
import { defaultDataDir } from "./local-server.ts";
import { localTerminalSize } from "./local-terminal.ts";

/** Titles wider than this are cut in the table so a row stays on one line of a normal terminal. */
const MAX_TITLE_COLUMN = 48;

const LS_FLAGS: FlagSpec[] = [{ name: "json", kind: "boolean", help: "print the sessions as a JSON array" }];
const NEW_FLAGS: FlagSpec[] = [
  { name: "title", kind: "string", help: "title shown in the session list" },
  { name: "cwd", kind: "string", help: "working directory (default: this one, when the server is local)" },
  { name: "agent", kind: "string", help: "start a hybrid session holding this coding agent's conversation (claude, codex)" },
  { name: "conversation", kind: "string", help: "with --agent: resume this existing conversation id" },
  { name: "end", kind: "string", help: "with --agent: where it starts, terminal (default) or chat" },
];

export async function lsCommand(argv: string[]): Promise<number> {
  const parsed = parseArgs(argv, [...LS_FLAGS, ...CLIENT_FLAGS]);
  if (parsed.flags.get("help")) {
    process.stdout.write(commandHelp("ls [--json]", "List the server's sessions; with no server running, the sessions its session host keeps.", LS_FLAGS));
    return 0;
  }
  if (parsed.positionals.length) throw new UsageError(`unexpected argument "${parsed.positionals[0]}"`);
  let sessions: SessionInfo[];
  try {
    sessions = await new WebmuxApi(resolveClientOptions(parsed, process.env)).listSessions();
  } catch (err) {
    // No server answers here: the data dir's session host holds the sessions on its own.
    const url = normaliseUrl(stringOf(flagOrEnv(parsed, "url", process.env)) ?? DEFAULT_URL);
    if (!(err instanceof CliError) || !["SERVER_UNREACHABLE", "NO_TOKEN"].includes(err.code) || !isLocalUrl(url)) throw err;
    const dataDir = resolve(stringOf(flagOrEnv(parsed, "data-dir", process.env)) ?? defaultDataDir(process.env));
    let held: HostListedSession[];
    try {
      held = await listHostSessions(dataDir);
    } catch (hostErr) {
      if (hostErr instanceof NoHostError) throw err;
      throw hostErr;
    }
    process.stderr.write(`webmux: no server answers at ${url}; the session host of ${dataDir} holds these (start \`webmux serve\` to use them)\n`);
    process.stdout.write(parsed.flags.get("json") ? JSON.stringify(held, null, 2) + "\n" : formatHostTable(held, Date.now()));
    return 0;
  }
  process.stdout.write(parsed.flags.get("json") ? JSON.stringify(sessions, null, 2) + "\n" : formatSessionTable(sessions, Date.now()));
  return 0;
}

function stringOf(value: string | boolean | undefined): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** The host's sessions: ID, STATUS, PID, SIZE, AGE, TITLE (no clients: none can be connected without a server). */
export function formatHostTable(sessions: HostListedSession[], now: number): string {
  if (sessions.length === 0) return "no sessions in the session host\n";
  const status = (s: HostListedSession) => (!s.run ? "not started" : s.run.status === "exited" ? `exited(${s.run.exitCode ?? "?"})` : "running");
  const rows = [
    ["ID", "STATUS", "PID", "SIZE", "AGE", "TITLE"],
    ...sessions.map((s) => [s.id, status(s), String(s.run?.pid ?? "-"), `${s.cols}x${s.rows}`, formatAge(now - s.createdAt), cut(s.title ?? s.command.join(" "), MAX_TITLE_COLUMN)]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => Array.from(r[i]!).length)));
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  ").trimEnd()).join("\n") + "\n";
}

export async function newCommand(argv: string[]): Promise<number> {
  const parsed = parseArgs(argv, [...NEW_FLAGS, ...CLIENT_FLAGS]);
  if (parsed.flags.get("help")) {
    process.stdout.write(
      commandHelp(
        "new [--title T] [--cwd D] [-- command …]\n       webmux new --agent claude [--conversation ID] [--end terminal|chat] [--title T] [--cwd D]",
        "Start a session (the login shell unless a command follows `--`) and print its id.\n" +
          "With --agent, a hybrid session: one agent conversation that `webmux move` takes between its\n" +
          "terminal (the agent's TUI) and the chat view.",
        NEW_FLAGS,
      ),
    );
    return 0;
  }
  if (parsed.positionals.length) throw new UsageError(`unexpected argument "${parsed.positionals[0]}" (put the command after --)`);
  const hybrid = hybridField(parsed.flags, parsed.rest);
  const options = resolveClientOptions(parsed, process.env);
  const request = createRequest(parsed.rest, parsed.flags.get("title"), parsed.flags.get("cwd"), isLocalUrl(options.url));
  const session = await new WebmuxApi(options).createSession(hybrid ? ({ ...request, hybrid } satisfies CreateHybridSessionRequest) : request);
  process.stdout.write(`${session.id}\n`);
  return 0;
}

/** The `hybrid` field from --agent/--conversation/--end, or null for a plain session; the server checks the agent's name. */
function hybridField(flags: Map<string, string | boolean>, command: string[]): CreateHybridSessionRequest["hybrid"] | null {
  const agent = flags.get("agent");
  const conversation = flags.get("conversation");
  const end = flags.get("end");
  if (typeof agent !== "string") {
    if (conversation !== undefined || end !== undefined) throw new UsageError("--conversation and --end need --agent");
    return null;
  }
  if (command.length) throw new UsageError("a hybrid session runs its agent: leave out the command after --");
  if (end !== undefined && end !== "terminal" && end !== "chat") throw new UsageError(`--end must be terminal or chat, got "${String(end)}"`);
  return {
    agent,
    ...(typeof conversation === "string" ? { conversationId: conversation } : {}),
    ...(end !== undefined ? { end: end as HybridEnd } : {}),
  };
}

export async function killCommand(argv: string[]): Promise<number> {
  const parsed = parseArgs(argv, CLIENT_FLAGS);
  if (parsed.flags.get("help")) {
    process.stdout.write(commandHelp("kill <id> …", "End the sessions' programs and remove the sessions.", []));
    return 0;
  }
  if (parsed.positionals.length === 0) throw new UsageError("which session? usage: webmux kill <id> …");
  const api = new WebmuxApi(resolveClientOptions(parsed, process.env));
  for (const id of parsed.positionals) await api.deleteSession(id);
  return 0;
}

/**
 * The body of POST /api/sessions for `new` and `run`. A relative --cwd, and the default cwd, are
 * this shell's directory, which only means something when the server runs on this machine.
 */
export function createRequest(
  command: string[],
  title: string | boolean | undefined,
  cwd: string | boolean | undefined,
  serverIsLocal: boolean,
): CreateSessionRequest {
  const request: CreateSessionRequest = {};
  if (command.length) request.command = command;
  if (typeof title === "string") request.title = title;
  if (typeof cwd === "string") request.cwd = serverIsLocal ? resolve(cwd) : cwd;
  else if (serverIsLocal) request.cwd = process.cwd();
  const size = localTerminalSize();
  if (size) Object.assign(request, size);
  return request;
}

/** `3m`, `2h`, `5d`: how long ago, as short as `ls` needs. */
export function formatAge(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

function cut(text: string, max: number): string {
  const chars = Array.from(text.replace(/[\u0000-\u001f\u007f-\u009f]/g, " "));
  return chars.length <= max ? chars.join("") : chars.slice(0, max - 1).join("") + "…";
}

/**
 * What STATUS says: the program's state, or for a hybrid session its conversation's state (the PTY
 * of one parked at the chat end has exited, which is no failure), `!` marking a start that failed.
 */
function statusCell(s: SessionInfo): string {
  if (s.hybrid) return s.hybrid.error ? `${s.hybrid.state}!` : s.hybrid.state;
  return s.status === "exited" ? `exited(${s.exitCode ?? "?"})` : "running";
}

/**
 * Aligned columns: ID, STATUS, CLIENTS, SIZE, AGE, TITLE, with AGENT (`claude@chat`: the agent and
 * the end its conversation is at) before TITLE when a session is hybrid; a note when there are none.
 */
export function formatSessionTable(sessions: SessionInfo[], now: number): string {
  if (sessions.length === 0) return "no sessions (start one with `webmux new` or `webmux run -- <command>`)\n";
  const anyHybrid = sessions.some((s) => s.hybrid);
  const agentCell = (s: SessionInfo): string[] => (anyHybrid ? [s.hybrid ? `${s.hybrid.agent}@${s.hybrid.end}` : "-"] : []);
  const rows = [
    ["ID", "STATUS", "CLIENTS", "SIZE", "AGE", ...(anyHybrid ? ["AGENT"] : []), "TITLE"],
    ...sessions.map((s) => [
      s.id,
      statusCell(s),
      String(s.clients),
      `${s.cols}x${s.rows}`,
      formatAge(now - s.createdAt),
      ...agentCell(s),
      cut(s.title, MAX_TITLE_COLUMN),
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => Array.from(r[i]!).length)));
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  ").trimEnd()).join("\n") + "\n";
}
