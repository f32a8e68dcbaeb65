#!/usr/bin/env node
// A scripted stand-in for the Codex CLI, for the Codex adapter's tests: `codex exec --json
// [resume <id>] <prompt|->` emits thread.started, turn.started, item.* and turn.completed as JSON
// lines and writes a rollout under $CODEX_HOME/sessions; `codex [resume <id>]` draws a prompt.
// Prompts: `say TEXT` answers TEXT, `run CMD` reports a command execution, `fail` fails the turn.
//
// Where the real codex 0.171 refuses, so does this (learned against a mock Responses API):
// unknown arguments exit 2 (clap); `exec` outside a git repository or trusted project without
// `--skip-git-repo-check` exits 1; `--sandbox` goes before `resume` only; the default sandbox is
// read-only (a `run` fails with "Read-only file system"); one writer per thread — a TUI started
// without `--no-daemon` hands its thread to a detached app-server "daemon" that outlives the TUI
// and holds the writer lock for FAKE_CODEX_DAEMON_LINGER_MS (default 30 s), so `exec resume` then
// fails with "thread … already has an active writer".
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";

const home = process.env.CODEX_HOME || join(process.env.HOME || homedir(), ".codex");
const day = join(home, "sessions", "2025", "01", "01");
const args = process.argv.slice(2);
const out = (event) => process.stdout.write(`${JSON.stringify(event)}\n`);

function usage(message) {
  process.stderr.write(`error: ${message}\n`);
  process.exit(2);
}

function fail(message) {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

/** The real exec refuses outside a git repository unless the project is trusted in config.toml. */
function insideGitRepoOrTrusted(cwd) {
  for (let dir = cwd; ; dir = dirname(dir)) {
    if (existsSync(join(dir, ".git"))) return true;
    if (dirname(dir) === dir) break;
  }
  let config = "";
  try {
    config = readFileSync(join(home, "config.toml"), "utf8");
  } catch {
    return false;
  }
  return config.includes(`[projects."${cwd}"]`) && /trust_level\s*=\s*"trusted"/.test(config);
}

const LOCKS = join(home, "fake-writers");
const lockPath = (id) => join(LOCKS, id);

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Take the thread's writer lock for `pid`, or fail as the real one does when a live writer has it. */
function takeWriterLock(id, pid = process.pid) {
  try {
    const holder = Number(readFileSync(lockPath(id), "utf8"));
    if (holder !== process.pid && alive(holder)) fail(`Error: thread/resume: thread/resume failed: thread ${id} already has an active writer (code -32600)`);
  } catch {
    // no lock yet
  }
  mkdirSync(LOCKS, { recursive: true });
  writeFileSync(lockPath(id), String(pid));
}

function releaseWriterLock(id) {
  try {
    if (Number(readFileSync(lockPath(id), "utf8")) === process.pid) rmSync(lockPath(id));
  } catch {
    // not ours
  }
}

/** The shared app-server daemon: detached (our SIGTERM to the TUI does not reach it), it keeps the thread. */
function startDaemon(id) {
  const linger = Number(process.env.FAKE_CODEX_DAEMON_LINGER_MS ?? 30_000);
  const daemon = spawn(process.execPath, ["-e", `setTimeout(() => {}, ${linger})`], { detached: true, stdio: "ignore" });
  daemon.unref();
  takeWriterLock(id, daemon.pid);
  const log = process.env.FAKE_CODEX_DAEMON_LOG;
  if (log) appendFileSync(log, `${daemon.pid} ${id}\n`);
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
      process.stderr.write(`Error: thread/resume: thread/resume failed: no rollout found for thread id ${resumeId} (code -32600)\n`);
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
    const readOnly = thread.sandbox === "read-only";
    const output = readOnly ? `${run[1]}: cannot write: Read-only file system` : `ran ${run[1]}`;
    const item = { id: "item_0", type: "command_execution", command: run[1], aggregated_output: output, exit_code: readOnly ? 1 : 0, status: readOnly ? "failed" : "completed" };
    emit({ type: "item.started", item: { ...item, aggregated_output: "", exit_code: null, status: "in_progress" } });
    emit({ type: "item.completed", item });
    record(thread, { type: "function_call", name: "shell", arguments: JSON.stringify({ command: run[1] }), call_id: "call_0" });
    record(thread, { type: "function_call_output", call_id: "call_0", output });
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
  let skipGitCheck = false;
  let sandbox = "read-only";
  const rest = [];
  for (let i = 1; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--json") json = true;
    else if (arg === "--skip-git-repo-check") skipGitCheck = true;
    else if ((arg === "--sandbox" || arg === "-s") && resume === null) {
      sandbox = args[++i] ?? usage("a value is required for '--sandbox <SANDBOX_MODE>'");
      if (!["read-only", "workspace-write", "danger-full-access"].includes(sandbox)) usage(`invalid value '${sandbox}' for '--sandbox <SANDBOX_MODE>'`);
    } else if (arg === "resume" && rest.length === 0 && resume === null) resume = args[++i] ?? usage("resume needs a session id");
    else if (arg.startsWith("-") && arg !== "-") usage(`unexpected argument '${arg}' found`);
    else rest.push(arg);
  }
  if (!json) usage("this fake only speaks --json");
  if (!skipGitCheck && !insideGitRepoOrTrusted(process.cwd())) fail("Not inside a trusted directory and --skip-git-repo-check was not specified.");
  const prompt = rest.length === 0 || rest[0] === "-" ? await readStdin() : rest.join(" ");
  const thread = openThread(resume);
  thread.sandbox = sandbox;
  takeWriterLock(thread.id);
  out({ type: "thread.started", thread_id: thread.id });
  out({ type: "turn.started" });
  const ok = runPrompt(thread, prompt.trim(), out);
  out(ok ? { type: "turn.completed", usage: { input_tokens: 10, cached_input_tokens: 0, output_tokens: 5 } } : { type: "turn.failed", error: { message: "fake failure" } });
  releaseWriterLock(thread.id);
  process.exit(0);
}

// The TUI: `codex [--no-daemon]` or `codex resume [--no-daemon] <id>`.
let noDaemon = false;
const words = [];
for (const arg of args) {
  if (arg === "--no-daemon") noDaemon = true;
  else if (arg.startsWith("-")) usage(`unexpected argument '${arg}' found`);
  else words.push(arg);
}
if (words.length > 0 && !(words[0] === "resume" && words.length === 2)) usage(`unexpected argument '${words[0]}' found`);
const thread = openThread(words[0] === "resume" ? words[1] : null);
thread.sandbox = "workspace-write";
if (noDaemon) takeWriterLock(thread.id);
else startDaemon(thread.id);
process.on("exit", () => releaseWriterLock(thread.id));
process.on("SIGTERM", () => process.exit(143));
// Raw mode and the reader come before the first prompt: a key typed the moment "› " shows must not
// land in the cooked line discipline (where Enter becomes "\n" and the prompt never runs).
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
process.stdout.write(`fake codex, thread ${thread.id}\r\n› `);
