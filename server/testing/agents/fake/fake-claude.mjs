#!/usr/bin/env node
// A scripted stand-in for Claude Code, for tests without a model or a network (docs/design.md,
// Hybrid sessions). It honours the real command-line contract (./args.mjs),
// writes a real-shaped transcript (./conversation.mjs), runs `--settings` hooks with real payloads
// (./hooks.mjs), draws a TUI prompt (./tui.mjs) or speaks stream-json (./headless.mjs), and is
// scripted by its prompts (./script.mjs).
//
// Knobs (environment): FAKE_CLAUDE_PID_LOG=<file> appends `<pid> <conversationId> <start|exit>`;
// FAKE_CLAUDE_NEW_ID_ON_RESUME=1 mints a new conversation id on --resume (history copied);
// FAKE_CLAUDE_NO_PERMISSION_EVENTS=1 refuses tools without a can_use_tool request;
// FAKE_CLAUDE_DELTA_MS=<ms> paces streamed text (default 10).
import { randomUUID } from "node:crypto";
import { parseArgs, UsageError } from "./args.mjs";
import { Conversation, FAKE_VERSION, logPid } from "./conversation.mjs";
import { loadSettings } from "./hooks.mjs";

const env = process.env;

/** A line as Claude Code's Ink renderer draws it from `column` (1-based): each word placed with CSI n G. */
function inkLine(text, column) {
  let out = "";
  for (const word of text.split(" ")) {
    out += `\x1b[${column}G${word}`;
    column += word.length + 1;
  }
  return out;
}

function fail(message, status) {
  process.stderr.write(`${message}\n`);
  process.exit(status);
}

let options;
try {
  options = parseArgs(process.argv.slice(2));
} catch (err) {
  if (err instanceof UsageError) fail(err.message, err.status);
  throw err;
}
if (options.version) {
  process.stdout.write(`${FAKE_VERSION} (Claude Code)\n`);
  process.exit(0);
}
if (options.help) {
  process.stdout.write("Usage: claude [options] [prompt]\n");
  process.exit(0);
}

let settings;
try {
  settings = loadSettings(options.settings);
} catch (err) {
  fail(err.message, 1);
}

const cwd = process.cwd();
let conversation;
let resumed = false;
if (options.resume !== undefined) {
  conversation = new Conversation(env, cwd, options.resume);
  if (!conversation.exists) {
    if (options.print) fail(`No conversation found with session ID: ${options.resume}`, 1);
    // The real TUI prints it between its screen setup and teardown sequences (save/restore cursor, charset, SI).
    const teardown = "\x1b[?25h\x1b[?1006l\x1b[?1003l\x1b[?1002l\x1b[?1000l\x1b(B\x0f\x1b[>4m\x1b[<u\x1b[?1004l\x1b[?2031l\x1b[?2004l\x1b[?25h\x1b7\x1b[r\x1b8";
    // Its Ink renderer moves over the blanks between words (CSI n G) instead of printing spaces.
    const line = inkLine(`No conversation found with session ID: ${options.resume}`, 2);
    process.stdout.write(`\x1b7\x1b[r\x1b8\x1b[?25h\x1b[95m${line}\x1b[39m\r\r\n${teardown}\x1b]0;\x07\x1b[?25h`, () => process.exit(1));
    await new Promise(() => {});
  }
  conversation.load();
  if (env.FAKE_CLAUDE_NEW_ID_ON_RESUME === "1") conversation = conversation.fork(randomUUID());
  resumed = true;
} else {
  conversation = new Conversation(env, cwd, options.sessionId ?? randomUUID());
  if (options.sessionId !== undefined && conversation.exists) fail(`Error: Session ID ${options.sessionId} is already in use.`, 1);
}

const state = { conversation };
logPid(env, conversation.id, "start");
process.on("exit", () => logPid(env, state.conversation.id, "exit"));
for (const [signal, number] of [["SIGTERM", 15], ["SIGHUP", 1], ["SIGINT", 2]]) {
  process.on(signal, () => process.exit(128 + number));
}

const run = options.print ? (await import("./headless.mjs")).runHeadless : (await import("./tui.mjs")).runTui;
await run({ options, settings, state, resumed, env });
