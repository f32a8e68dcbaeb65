#!/usr/bin/env node
// A scripted stand-in for the Codex CLI, for the Codex adapter's tests: `codex exec --json
// [resume <id>] <prompt|->` emits thread.started, turn.started, item.* and turn.completed as JSON
// lines and writes a rollout under $CODEX_HOME/sessions; `codex [resume <id>]` draws a prompt.
// Prompts: `say TEXT` answers TEXT, `run CMD` reports a command execution, `fail` fails the turn.
import { randomUUID } from "node:crypto";
import { appendFileSync, mkdirSync, readdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

const home = process.env.CODEX_HOME || join(process.env.HOME || homedir(), ".codex");
const day = join(home, "sessions", "2025", "01", "01");
const args = process.argv.slice(2);
const out = (event) => process.stdout.write(`${JSON.stringify(event)}\n`);

function usage(message) {
  process.stderr.write(`error: ${message}\n`);
  process.exit(2);
}

function rolloutOf(id) {
  try {
    const name = readdirSync(day).find((n) => n.endsWith(`-${id}.jsonl`));
    return name ? join(day, name) : null;
  } catch {
    return null;
  }
}

function openThread(resumeId) {
  if (resumeId) {
    const path = rolloutOf(resumeId);
    if (!path) {
      process.stderr.write(`Error: thread/resume failed: no rollout found for thread id ${resumeId}\n`);
      process.exit(1);
    }
    return { id: resumeId, path };
  }
  const id = randomUUID();
  mkdirSync(day, { recursive: true });
  const path = join(day, `rollout-2025-01-01T00-00-00-${id}.jsonl`);
  appendFileSync(path, `${JSON.stringify({ timestamp: new Date().toISOString(), type: "session_meta", payload: { id, cwd: process.cwd(), originator: "fake_codex" } })}\n`);
  return { id, path };
}

function record(thread, payload) {
  appendFileSync(thread.path, `${JSON.stringify({ timestamp: new Date().toISOString(), type: "response_item", payload })}\n`);
}

function runPrompt(thread, prompt, emit) {
  record(thread, { type: "message", role: "user", content: [{ type: "input_text", text: prompt }] });
  const run = /^run\s+(.*)$/.exec(prompt);
  if (prompt.trim() === "fail") return false;
  if (run) {
    const item = { id: "item_0", type: "command_execution", command: run[1], aggregated_output: `ran ${run[1]}`, exit_code: 0, status: "completed" };
    emit({ type: "item.started", item: { ...item, aggregated_output: "", exit_code: null, status: "in_progress" } });
    emit({ type: "item.completed", item });
    record(thread, { type: "function_call", name: "shell", arguments: JSON.stringify({ command: run[1] }), call_id: "call_0" });
    record(thread, { type: "function_call_output", call_id: "call_0", output: `ran ${run[1]}` });
  }
  const say = /^say\s+(.*)$/.exec(prompt);
  const text = say ? say[1] : `You said: ${prompt}`;
  emit({ type: "item.completed", item: { id: "item_1", type: "agent_message", text } });
  record(thread, { type: "message", role: "assistant", content: [{ type: "output_text", text }] });
  return true;
}

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

if (args[0] === "exec") {
  let json = false;
  let resume = null;
  const rest = [];
  for (let i = 1; i < args.length; i++) {
    if (args[i] === "--json") json = true;
    else if (args[i] === "resume" && rest.length === 0 && resume === null) resume = args[++i] ?? usage("resume needs a session id");
    else if (args[i].startsWith("-") && args[i] !== "-") usage(`unexpected argument '${args[i]}' found`);
    else rest.push(args[i]);
  }
  if (!json) usage("this fake only speaks --json");
  const prompt = rest.length === 0 || rest[0] === "-" ? await readStdin() : rest.join(" ");
  const thread = openThread(resume);
  out({ type: "thread.started", thread_id: thread.id });
  out({ type: "turn.started" });
  const ok = runPrompt(thread, prompt.trim(), out);
  out(ok ? { type: "turn.completed", usage: { input_tokens: 10, cached_input_tokens: 0, output_tokens: 5 } } : { type: "turn.failed", error: { message: "fake failure" } });
  process.exit(0);
}

// The TUI: `codex` or `codex resume <id>`.
if (args.length > 0 && !(args[0] === "resume" && args.length === 2)) usage(`unexpected argument '${args[0]}' found`);
const thread = openThread(args[0] === "resume" ? args[1] : null);
process.on("SIGTERM", () => process.exit(143));
process.stdout.write(`fake codex, thread ${thread.id}\r\n› `);
if (process.stdin.isTTY) process.stdin.setRawMode(true);
process.stdin.setEncoding("utf8");
let line = "";
process.stdin.on("data", (data) => {
  for (const ch of data) {
    if (ch !== "\r") {
      line += ch;
      process.stdout.write(ch);
      continue;
    }
    const prompt = line.trim();
    line = "";
    if (prompt === "/exit") process.exit(0);
    process.stdout.write("\r\n");
    runPrompt(thread, prompt, (event) => event.item?.type === "agent_message" && process.stdout.write(`• ${event.item.text}\r\n`));
    process.stdout.write("› ");
  }
});
