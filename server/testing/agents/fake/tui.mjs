// The fake's TUI: a prompt in the terminal, typed turns scripted like headless ones, a permission
// prompt for `tool`, Esc to interrupt, /exit and /clear, and the hooks Claude Code 2.1 runs around
// it: SessionStart at start (and /clear), UserPromptSubmit before a turn, Stop after it, StopFailure
// instead when the turn ended on an API error, neither after an interrupt or a refused tool;
// PreToolUse, then PermissionRequest at once when it asks, PostToolUse after an allowed tool, and
// Notification(permission_prompt) only when the question stayed unanswered for
// FAKE_CLAUDE_NOTIFICATION_MS (default 6000, as the real one).
import { randomUUID } from "node:crypto";
import { Conversation, messageId, toolUseId } from "./conversation.mjs";
import { hookPayload, runHooks } from "./hooks.mjs";
import { parsePrompt } from "./script.mjs";

const PASTE_START = "\x1b[200~";
const PASTE_END = "\x1b[201~";
/** How often a `slow` step looks for an interrupt. */
const SLOW_TICK_MS = 50;
/** The real TUI notifies about an open permission prompt this late (and not at all once answered). */
const NOTIFICATION_DELAY_MS = 6_000;

export async function runTui({ settings, state, resumed, env }) {
  const notificationMs = Number(env.FAKE_CLAUDE_NOTIFICATION_MS ?? NOTIFICATION_DELAY_MS);
  const out = (text) => process.stdout.write(text);
  let mode = "prompt"; // prompt | busy | permission
  let line = "";
  let interrupted = false;
  let answer = null; // resolves a permission prompt: "allow" | "deny" | "cancel"

  const hook = (event, fields, match) => runHooks(settings, event, hookPayload(state.conversation, event, fields), match);
  const prompt = () => out(`\r\n\x1b[2m────────────────────────────────────────\x1b[0m\r\n\x1b[1m>\x1b[0m `);

  // Keys typed while it starts are kept and handled once the prompt is drawn, as the real TUI does.
  const early = [];
  let started = false;
  if (process.stdin.isTTY) process.stdin.setRawMode(true);
  process.stdin.setEncoding("utf8");
  process.stdin.on("data", (data) => (started ? key(data) : early.push(data)));
  process.stdin.on("end", () => process.exit(0));

  out("\x1b[?2004h"); // bracketed paste, as the real TUI turns it on
  out(`\x1b[1m✻ Fake Claude Code\x1b[0m  conversation ${state.conversation.id}\r\n`);
  if (resumed) out(`  resumed with ${state.conversation.messages} earlier messages\r\n`);
  await hook("SessionStart", { source: resumed ? "resume" : "startup" }, resumed ? "resume" : "startup");

  async function turn(text) {
    mode = "busy";
    interrupted = false;
    out("\r\n");
    await hook("UserPromptSubmit", { prompt: text });
    state.conversation.userPrompt(text);
    let failed = false;
    for (const step of parsePrompt(text)) {
      if (interrupted) break;
      if (step.kind === "say") {
        state.conversation.assistantBlock(messageId(), { type: "text", text: step.text });
        out(`⏺ ${step.text}\r\n`);
      } else if (step.kind === "slow") {
        out("✻ Working…\r\n");
        const until = Date.now() + step.seconds * 1000;
        while (!interrupted && Date.now() < until) await new Promise((r) => setTimeout(r, SLOW_TICK_MS));
      } else if (step.kind === "tool") {
        const id = toolUseId();
        state.conversation.assistantBlock(messageId(), { type: "tool_use", id, name: step.name, input: step.input });
        out(`⏺ ${step.name}(${JSON.stringify(step.input)})\r\n  Do you want to proceed?\r\n  ❯ 1. Yes\r\n    2. No\r\n`);
        const toolFields = { tool_name: step.name, tool_input: step.input, tool_use_id: id };
        await hook("PreToolUse", toolFields, step.name);
        mode = "permission";
        const decided = new Promise((resolve) => (answer = resolve));
        await hook("PermissionRequest", { tool_name: step.name, tool_input: step.input, permission_suggestions: [] }, step.name);
        const late = setTimeout(() => void hook("Notification", { message: "Claude needs your permission", notification_type: "permission_prompt" }), notificationMs);
        const decision = await decided;
        clearTimeout(late);
        answer = null;
        mode = "busy";
        if (decision === "allow") {
          state.conversation.toolResult(id, `ran ${step.name}`, false);
          out(`  ⎿  ran ${step.name}\r\n`);
          await hook("PostToolUse", { ...toolFields, tool_response: { stdout: `ran ${step.name}`, stderr: "" } }, step.name);
        } else {
          state.conversation.toolResult(id, "The user doesn't want to proceed with this tool use. The tool use was rejected.", true);
          interrupted = true;
        }
      } else if (step.kind === "fail") {
        state.conversation.apiError("API Error: fake failure");
        out("⏺ API Error: fake failure\r\n");
        failed = true;
        break;
      } else if (step.kind === "clear") {
        await clear();
      }
    }
    if (interrupted) {
      state.conversation.interrupted();
      out("  ⎿  Interrupted by user\r\n");
    } else if (failed) await hook("StopFailure", { error: "unknown", last_assistant_message: "API Error: fake failure" });
    else await hook("Stop", { stop_hook_active: false });
    mode = "prompt";
    prompt();
  }

  async function clear() {
    state.conversation = new Conversation(state.conversation.env, state.conversation.cwd, randomUUID());
    out(`(conversation cleared: ${state.conversation.id})\r\n`);
    await hook("SessionStart", { source: "clear" }, "clear");
  }

  function submit() {
    const text = line.trim();
    line = "";
    if (text === "") return prompt();
    if (text === "/exit" || text === "/quit") {
      out("\r\n");
      process.exit(0);
    }
    if (text === "/clear") {
      mode = "busy";
      out("\r\n");
      void clear().then(() => {
        mode = "prompt";
        prompt();
      });
      return;
    }
    void turn(text);
  }

  function key(data) {
    if (mode === "permission") {
      if (data === "1" || data === "y" || data === "\r") answer?.("allow");
      else if (data === "2" || data === "n") answer?.("deny");
      else if (data === "\x1b" || data === "\x03") {
        interrupted = true;
        answer?.("cancel");
      }
      return;
    }
    if (mode === "busy") {
      if (data === "\x1b" || data === "\x03") interrupted = true;
      return;
    }
    if (data === "\x03" || data === "\x04") {
      if (line === "") process.exit(0);
      line = "";
      return prompt();
    }
    let text = data.split(PASTE_START).join("").split(PASTE_END).join("");
    for (const ch of text) {
      if (ch === "\r") submit();
      else if (ch === "\x7f" || ch === "\b") {
        if (line.length > 0) {
          line = line.slice(0, -1);
          out("\b \b");
        }
      } else if (ch >= " " || ch === "\n") {
        line += ch;
        out(ch === "\n" ? "\r\n" : ch);
      }
    }
  }

  prompt();
  started = true;
  for (const data of early.splice(0)) key(data);
}
