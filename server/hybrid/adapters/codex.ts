/**
 * Codex behind the AgentAdapter interface, first version (docs/design.md, Hybrid sessions): the
 * chat end runs `codex exec --json --skip-git-repo-check --sandbox workspace-write [resume <id>] -`
 * once per turn (the prompt on stdin), without approvals (`caps.permissions` is false). The TUI
 * is `codex --no-daemon` / `codex resume --no-daemon <id>`; with no hooks, the conversation a TUI
 * run used is found among the rollouts afterwards.
 */
import type { ChatMessage, ChatPart } from "../../contract/chat.ts";
import { Emitter } from "../../session/emitter.ts";
import { agentBinary, requireExecutable } from "./agent-bin.ts";
import type { AgentAdapter, AgentContext, ChatDriver, ChatDriverEvents, ConversationContext, HookSignal, TerminalLaunch } from "./adapter.ts";
import { AgentProcess } from "./agent-process.ts";
import { findRollout, locateRollout, readCodexTranscript } from "./codex-transcript.ts";
import { MAX_TOOL_RESULT_CHARS } from "./claude-blocks.ts";

/** The environment variable that names the codex program. */
export const CODEX_BIN_VARIABLE = "WEBMUX_CODEX_BIN";
/** An interrupted turn's process gets this long after SIGINT before it is stopped harder. */
const INTERRUPT_GRACE_MS = 2_000;
/**
 * The chat end's sandbox. `exec` defaults to read-only (and approval "never"), so a chat turn
 * could not edit the project the user works on in the TUI; the chat end has no approval prompts
 * either, so it gets the TUI's own default for a trusted project: writes inside the workspace,
 * nothing outside it, no network.
 */
export const CODEX_CHAT_SANDBOX = "workspace-write";
/** What the chat view says about it (ChatCaps.sandbox). */
export const CODEX_CHAT_SANDBOX_TEXT = "Codex runs commands here without asking, sandboxed: it may write inside this workspace only, with no network (--sandbox workspace-write).";
/**
 * `exec` options every chat turn passes (before `resume`, which takes no `--sandbox`): the default
 * hybrid cwd is the home directory, rarely a git repository, and `exec` refuses to run outside one.
 */
export const CODEX_EXEC_OPTIONS = ["--json", "--skip-git-repo-check", "--sandbox", CODEX_CHAT_SANDBOX];
/**
 * The TUI runs without the shared app-server daemon: the daemon outlives a TUI we stop, finishes
 * its turn and holds the thread's writer lock for about a minute, so every chat turn would fail
 * with "thread … already has an active writer".
 */
const CODEX_TUI_OPTIONS = ["--no-daemon"];

type Json = Record<string, unknown>;

function obj(value: unknown): Json {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : {};
}

function cut(text: string): string {
  return text.length <= MAX_TOOL_RESULT_CHARS ? text : `${text.slice(0, MAX_TOOL_RESULT_CHARS)}\n… (${text.length - MAX_TOOL_RESULT_CHARS} more characters)`;
}

/** One `codex exec --json` item as the parts of one chat message. */
export function codexItemParts(item: Json, completed: boolean): ChatPart[] {
  const id = String(item.id ?? "");
  switch (item.type) {
    case "agent_message":
      return [{ type: "text", text: String(item.text ?? "") }];
    case "reasoning":
      return [{ type: "thinking", text: String(item.text ?? "") }];
    case "command_execution": {
      const parts: ChatPart[] = [{ type: "tool_call", toolUseId: id, name: "shell", input: { command: item.command ?? "" } }];
      if (completed) {
        const failed = typeof item.exit_code === "number" && item.exit_code !== 0;
        parts.push({ type: "tool_result", toolUseId: id, content: cut(String(item.aggregated_output ?? "")), isError: failed || item.status === "failed" });
      }
      return parts;
    }
    case "file_change": {
      const parts: ChatPart[] = [{ type: "tool_call", toolUseId: id, name: "apply_patch", input: { changes: item.changes ?? [] } }];
      if (completed) parts.push({ type: "tool_result", toolUseId: id, content: String(item.status ?? "done"), isError: item.status === "failed" });
      return parts;
    }
    case "mcp_tool_call":
      return [{ type: "tool_call", toolUseId: id, name: `${String(item.server ?? "mcp")}.${String(item.tool ?? "tool")}`, input: item.arguments ?? {} }];
    case "web_search":
      return [{ type: "tool_call", toolUseId: id, name: "web_search", input: { query: item.query ?? "" } }];
    case "todo_list":
      return [{ type: "service", text: (Array.isArray(item.items) ? item.items : []).map((t) => `${obj(t).completed ? "☑" : "☐"} ${String(obj(t).text ?? "")}`).join("\n") }];
    case "error":
      return [{ type: "service", text: String(item.message ?? "error") }];
    default:
      return [];
  }
}

/** Codex passes an API error on as the body it got (`{"error":{"message":…}}`): the message is what a person reads. */
export function codexErrorText(message: unknown): string {
  const text = String(message);
  try {
    const inner = obj(obj(JSON.parse(text)).error).message;
    if (typeof inner === "string" && inner !== "") return inner;
  } catch {
    // plain text already
  }
  return text;
}

export class CodexChatDriver implements ChatDriver {
  readonly events = new Emitter<ChatDriverEvents>();
  private proc: AgentProcess | null = null;
  private turn: { id: string; interrupted: boolean; ended: boolean; error: string | null } | null = null;
  private conversationId: string;

  constructor(private readonly spec: { binary: string; cwd: string; env: Readonly<Record<string, string>>; conversationId: string }) {
    this.conversationId = spec.conversationId;
  }

  get pid(): number | null {
    return this.proc?.pid ?? null;
  }

  /** Nothing runs between turns: ready at once. */
  async start(): Promise<void> {}

  send(turn: { id: string; text: string; messageId: string }): Promise<boolean> {
    const args = ["exec", ...CODEX_EXEC_OPTIONS, ...(this.conversationId ? ["resume", this.conversationId] : []), "-"];
    const current = { id: turn.id, interrupted: false, ended: false, error: null as string | null };
    this.turn = current;
    const proc = new AgentProcess([this.spec.binary, ...args], this.spec, (line) => this.onLine(line, current));
    this.proc = proc;
    void proc.exited.then((exit) => {
      if (this.proc === proc) this.proc = null;
      if (current.ended) return;
      current.ended = true;
      if (current.interrupted) this.events.emit("turnEnd", "interrupted", undefined, undefined);
      else this.events.emit("turnEnd", "error", undefined, current.error ?? exit.error ?? (proc.stderr || `codex exited with ${exit.code ?? exit.signal}`));
    });
    const written = proc.write(turn.text);
    proc.endInput();
    return written;
  }

  respond(): void {
    // no approvals in this version: caps.permissions is false
  }

  interrupt(): void {
    if (!this.turn || !this.proc) return;
    this.turn.interrupted = true;
    void this.proc.stop(0, INTERRUPT_GRACE_MS);
  }

  async close(): Promise<void> {
    if (this.turn) this.turn.interrupted = true;
    await this.proc?.stop(0);
  }

  private onLine(line: string, turn: { id: string; ended: boolean; error: string | null }): void {
    let event: Json;
    try {
      event = obj(JSON.parse(line));
    } catch {
      return;
    }
    switch (event.type) {
      case "thread.started":
        if (typeof event.thread_id === "string" && event.thread_id !== "") {
          this.conversationId = event.thread_id;
          this.events.emit("init", event.thread_id);
        }
        return;
      case "item.started":
      case "item.updated":
      case "item.completed": {
        const item = obj(event.item);
        const parts = codexItemParts(item, event.type === "item.completed");
        if (parts.length === 0) return;
        const message: ChatMessage = { id: `${turn.id}-${String(item.id ?? "")}`, role: "assistant", parts, createdAt: Date.now(), turnId: turn.id };
        this.events.emit("message", message);
        return;
      }
      case "turn.completed":
        if (turn.ended) return;
        turn.ended = true;
        this.events.emit("turnEnd", "success", undefined, undefined);
        return;
      case "turn.failed":
        if (turn.ended) return;
        turn.ended = true;
        this.events.emit("turnEnd", "error", undefined, codexErrorText(obj(event.error).message ?? "the turn failed"));
        return;
      case "error":
        turn.error = codexErrorText(event.message ?? "error");
        return;
      default:
        return;
    }
  }
}

export class CodexAdapter implements AgentAdapter {
  readonly name = "codex";
  readonly caps = { permissions: false, interrupt: true, sandbox: CODEX_CHAT_SANDBOX_TEXT };
  readonly terminalStop = { signal: "SIGTERM" as const, graceMs: 3_000 };
  readonly terminalReportsStart = false;
  readonly terminalInterrupt = "\x1b";

  displayCommand(): string[] {
    return ["codex"];
  }

  private binary(env: Readonly<Record<string, string>>): string {
    return agentBinary(env, CODEX_BIN_VARIABLE, "codex");
  }

  checkInstalled(ctx: AgentContext): void {
    requireExecutable(this.binary(ctx.env), ctx.env, CODEX_BIN_VARIABLE);
  }

  newConversationId(): null {
    return null;
  }

  async hasTranscript(ctx: ConversationContext): Promise<boolean> {
    return (await findRollout(ctx.env, ctx.conversationId)) !== null;
  }

  readTranscript(ctx: ConversationContext) {
    return readCodexTranscript(ctx.env, ctx.conversationId);
  }

  terminalLaunch(ctx: ConversationContext & { resume: boolean }): TerminalLaunch {
    const bin = this.binary(ctx.env);
    return { command: ctx.resume && ctx.conversationId ? [bin, "resume", ...CODEX_TUI_OPTIONS, ctx.conversationId] : [bin, ...CODEX_TUI_OPTIONS] };
  }

  readHook(): HookSignal {
    return { kind: "ignored" };
  }

  locateConversation(ctx: ConversationContext & { since: number }): Promise<string | null> {
    return locateRollout(ctx.env, ctx.cwd, ctx.since);
  }

  createChatDriver(ctx: ConversationContext): ChatDriver {
    return new CodexChatDriver({ binary: this.binary(ctx.env), cwd: ctx.cwd, env: ctx.env, conversationId: ctx.conversationId });
  }
}
