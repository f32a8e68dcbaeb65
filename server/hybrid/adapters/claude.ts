/**
 * Claude Code behind the AgentAdapter interface. The TUI runs as `claude --session-id <new>` or
 * `claude --resume <id>` with injected `--settings` hooks that report through the webmux hook
 * relay (docs/design.md, Hybrid sessions): UserPromptSubmit and PostToolUse → busy, Stop and
 * StopFailure (a turn that ended on an API error) → idle, PermissionRequest → awaiting_permission
 * (at once; Notification(permission_prompt) comes ~6 s late, and never when answered sooner),
 * Notification → attention, SessionStart → the conversation id (re-read on every start, since some
 * versions mint a new one on resume).
 */
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { agentBinary, requireExecutable } from "./agent-bin.ts";
import type { AgentAdapter, AgentContext, ChatDriver, ConversationContext, HookSignal, TerminalLaunch } from "./adapter.ts";
import { ClaudeChatDriver } from "./claude-chat-driver.ts";
import { findTranscript, findTranscriptElsewhere, readClaudeTranscript } from "./claude-transcript.ts";

/** The environment variable that names the claude program. */
export const CLAUDE_BIN_VARIABLE = "WEBMUX_CLAUDE_BIN";
/** Seconds a hook may take: the relay answers in milliseconds, so this only bounds a hung server. */
const HOOK_TIMEOUT_S = 10;
/** The hooks webmux injects, each relayed with its event name. */
const HOOK_EVENTS = ["SessionStart", "UserPromptSubmit", "PermissionRequest", "PostToolUse", "Stop", "StopFailure", "Notification"] as const;
/** Claude Code takes only UUIDs as conversation ids; anything else opens its interactive resume picker. */
const CLAUDE_CONVERSATION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type Json = Record<string, unknown>;

/** One word for `sh -c`: single-quoted, with embedded quotes closed and escaped. */
function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** The `--settings` document: each event runs the relay, which posts the hook's JSON to webmux. */
export function hookSettings(relay: readonly string[]): string {
  const hooks: Record<string, unknown> = {};
  for (const event of HOOK_EVENTS) {
    const command = [...relay, event].map(shellQuote).join(" ");
    hooks[event] = [{ hooks: [{ type: "command", command, timeout: HOOK_TIMEOUT_S }] }];
  }
  return `${JSON.stringify({ hooks }, null, 2)}\n`;
}

export class ClaudeAdapter implements AgentAdapter {
  readonly name = "claude";
  readonly caps = { permissions: true, interrupt: true };
  readonly terminalStop = { signal: "SIGTERM" as const, graceMs: 3_000 };
  readonly terminalReportsStart = true;
  /** Esc interrupts Claude Code's running turn. */
  readonly terminalInterrupt = "\x1b";

  displayCommand(): string[] {
    return ["claude"];
  }

  private binary(env: Readonly<Record<string, string>>): string {
    return agentBinary(env, CLAUDE_BIN_VARIABLE, "claude");
  }

  checkInstalled(ctx: AgentContext): void {
    requireExecutable(this.binary(ctx.env), ctx.env, CLAUDE_BIN_VARIABLE);
  }

  newConversationId(): string {
    return randomUUID();
  }

  conversationIdProblem(id: string): string | null {
    return CLAUDE_CONVERSATION_ID.test(id) ? null : "a Claude Code conversation id is a UUID";
  }

  async resumeProblem(ctx: ConversationContext): Promise<string | null> {
    if ((await findTranscript(ctx.env, ctx.cwd, ctx.conversationId)) !== null) return null;
    const elsewhere = await findTranscriptElsewhere(ctx.env, ctx.cwd, ctx.conversationId);
    return elsewhere === null ? null : `conversation ${ctx.conversationId} belongs to another directory (${elsewhere}); Claude Code resumes it only there`;
  }

  async hasTranscript(ctx: ConversationContext): Promise<boolean> {
    return (await findTranscript(ctx.env, ctx.cwd, ctx.conversationId)) !== null;
  }

  readTranscript(ctx: ConversationContext) {
    return readClaudeTranscript(ctx.env, ctx.cwd, ctx.conversationId);
  }

  terminalLaunch(ctx: ConversationContext & { resume: boolean; settingsDir: string; hookRelay: string[] }): TerminalLaunch {
    const path = join(ctx.settingsDir, "claude-settings.json");
    return {
      command: [this.binary(ctx.env), ctx.resume ? "--resume" : "--session-id", ctx.conversationId, "--settings", path],
      hookSettings: { path, text: hookSettings(ctx.hookRelay) },
    };
  }

  readHook(event: string, payload: unknown): HookSignal {
    const body = (typeof payload === "object" && payload !== null ? payload : {}) as Json;
    switch (event) {
      case "SessionStart":
        return { kind: "started", conversationId: typeof body.session_id === "string" && body.session_id !== "" ? body.session_id : null };
      case "UserPromptSubmit":
      case "PostToolUse":
        return { kind: "busy" };
      case "Stop":
      case "StopFailure":
        return { kind: "idle" };
      case "PermissionRequest":
        return { kind: "attention", permission: true };
      case "Notification": {
        const text = `${typeof body.message === "string" ? body.message : ""} ${typeof body.notification_type === "string" ? body.notification_type : ""}`;
        return { kind: "attention", permission: /permission/i.test(text) };
      }
      default:
        return { kind: "ignored" };
    }
  }

  createChatDriver(ctx: ConversationContext & { resume: boolean }): ChatDriver {
    const command = [
      this.binary(ctx.env),
      "-p",
      "--input-format",
      "stream-json",
      "--output-format",
      "stream-json",
      "--verbose",
      "--include-partial-messages",
      "--permission-prompt-tool",
      "stdio",
      ctx.resume ? "--resume" : "--session-id",
      ctx.conversationId,
    ];
    return new ClaudeChatDriver({ command, cwd: ctx.cwd, env: ctx.env, conversationId: ctx.conversationId });
  }
}
