// The fake's headless mode (`-p`). With `--input-format stream-json` it reads user messages and
// control messages from stdin, one JSON object per line, and answers each turn with
// `system/init`, streamed deltas (with --include-partial-messages), `assistant` messages, a
// `can_use_tool` control request for `tool` steps (with --permission-prompt-tool stdio) that waits
// for its `control_response`, and `result`. Control requests: `initialize`, `interrupt`.
// In the real program's order (2.1.197 against a mock Messages API): `system/status` before each
// API request, a block's `assistant` message before its `content_block_stop`, and a tool's
// `can_use_tool` right after its `assistant` message (before the stream ends); an API error is
// a synthetic assistant message ("API Error: …", model "<synthetic>") and then a `result` with
// is_error and the same text. AskUserQuestion and ExitPlanMode answer as the real tools do.
import { randomUUID } from "node:crypto";
import { createInterface } from "node:readline";
import { Conversation, FAKE_MODEL, FAKE_VERSION, messageId, toolUseId } from "./conversation.mjs";
import { hookPayload, runHooks } from "./hooks.mjs";
import { parsePrompt } from "./script.mjs";

/** How often a `slow` step streams a dot (and looks for an interrupt). */
const SLOW_TICK_MS = 100;
/** Streamed text comes in pieces of this many characters. */
const DELTA_CHARS = 4;

/** What the real tools answer the model once allowed. */
function allowedResult(name, input) {
  if (name === "AskUserQuestion") {
    const answers = Object.entries(input?.answers ?? {});
    if (answers.length === 0) return "The user did not answer the questions.";
    return `Your questions have been answered: ${answers.map(([q, a]) => `"${q}"="${a}"`).join(", ")}. You can now continue with these answers in mind.`;
  }
  if (name === "ExitPlanMode") return `User has approved your plan. You can now start coding.\n\n## Approved Plan:\n${input?.plan ?? ""}`;
  return `ran ${name} ${JSON.stringify(input)}`;
}

export async function runHeadless({ options, settings, state, resumed, env }) {
  const deltaMs = Number(env.FAKE_CLAUDE_DELTA_MS ?? 10);
  const partial = options.includePartialMessages === true;
  const askPermission = options.permissionPromptTool === "stdio" && env.FAKE_CLAUDE_NO_PERMISSION_EVENTS !== "1";
  let result = null;
  // stream-json prints every event; text and json print only the result at the end.
  const send = (event) => {
    if (options.outputFormat === "stream-json") process.stdout.write(`${JSON.stringify(event)}\n`);
    else if (event.type === "result") result = event;
  };
  const tagged = (event) => ({ ...event, parent_tool_use_id: null, session_id: state.conversation.id, uuid: randomUUID() });
  const stream = (event) => partial && send(tagged({ type: "stream_event", event }));
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const hook = (event, fields, match) => runHooks(settings, event, hookPayload(state.conversation, event, fields), match);
  const pendingPermissions = new Map(); // request id → resolve(answer)
  let current = null; // the running turn: { interrupted }

  await hook("SessionStart", { source: resumed ? "resume" : "startup" }, resumed ? "resume" : "startup");

  function init() {
    send({
      type: "system",
      subtype: "init",
      cwd: state.conversation.cwd,
      session_id: state.conversation.id,
      tools: ["Bash", "Edit", "Read", "Write"],
      mcp_servers: [],
      model: FAKE_MODEL,
      permissionMode: options.permissionMode ?? "default",
      slash_commands: ["clear", "compact"],
      apiKeySource: "none",
      claude_code_version: FAKE_VERSION,
      output_style: "default",
      agents: [],
      skills: [],
      plugins: [],
      uuid: randomUUID(),
    });
  }

  function assistant(id, block) {
    send(tagged({ type: "assistant", message: { id, type: "message", role: "assistant", model: FAKE_MODEL, content: [block], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 5 } } }));
    state.conversation.assistantBlock(id, block);
  }

  function startMessage(id) {
    send(tagged({ type: "system", subtype: "status", status: "requesting" }));
    stream({ type: "message_start", message: { id, type: "message", role: "assistant", model: FAKE_MODEL, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } } });
  }

  function stopMessage() {
    stream({ type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 5 } });
    stream({ type: "message_stop" });
  }

  async function say(text) {
    const id = messageId();
    startMessage(id);
    stream({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } });
    for (let i = 0; i < text.length && !current.interrupted; i += DELTA_CHARS) {
      stream({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: text.slice(i, i + DELTA_CHARS) } });
      if (deltaMs > 0) await sleep(deltaMs);
    }
    assistant(id, { type: "text", text });
    stream({ type: "content_block_stop", index: 0 });
    stopMessage();
    return text;
  }

  async function slow(seconds) {
    const id = messageId();
    let text = "Working";
    startMessage(id);
    stream({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } });
    stream({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text } });
    const until = Date.now() + seconds * 1000;
    while (!current.interrupted && Date.now() < until) {
      await sleep(SLOW_TICK_MS);
      text += ".";
      stream({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "." } });
    }
    assistant(id, { type: "text", text });
    stream({ type: "content_block_stop", index: 0 });
    stopMessage();
  }

  async function tool(name, input) {
    const id = messageId();
    const useId = toolUseId();
    startMessage(id);
    stream({ type: "content_block_start", index: 0, content_block: { type: "tool_use", id: useId, name, input: {} } });
    stream({ type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: JSON.stringify(input) } });
    assistant(id, { type: "tool_use", id: useId, name, input });
    // The real one asks as soon as the block is whole, before the rest of the stream.
    const requestId = randomUUID();
    const answered = askPermission ? new Promise((resolve) => pendingPermissions.set(requestId, resolve)) : null;
    if (answered) send({ type: "control_request", request_id: requestId, request: { subtype: "can_use_tool", tool_name: name, input, permission_suggestions: [], tool_use_id: useId } });
    stream({ type: "content_block_stop", index: 0 });
    stopMessage();
    let result;
    if (!answered) {
      result = { content: `Claude requested permissions to use ${name}, but you haven't granted it yet.`, isError: true };
    } else {
      const answer = await answered;
      pendingPermissions.delete(requestId);
      if (answer === "interrupted") {
        send({ type: "control_cancel_request", request_id: requestId });
        result = { content: "The user doesn't want to proceed with this tool use. The tool use was rejected.", isError: true };
      } else if (answer.behavior === "allow") {
        result = { content: allowedResult(name, answer.updatedInput ?? input), isError: false };
      } else {
        result = { content: answer.message || "denied", isError: true };
      }
    }
    send(tagged({ type: "user", message: { role: "user", content: [{ tool_use_id: useId, type: "tool_result", content: result.content, is_error: result.isError }] } }));
    state.conversation.toolResult(useId, result.content, result.isError);
  }

  async function turn(message) {
    current = { interrupted: false };
    const started = Date.now();
    const text = typeof message.message?.content === "string" ? message.message.content : (message.message?.content ?? []).filter((b) => b.type === "text").map((b) => b.text).join("\n");
    init();
    await hook("UserPromptSubmit", { prompt: text });
    state.conversation.userPrompt(text, message.uuid);
    let last = "";
    let failed = false;
    for (const step of parsePrompt(text)) {
      if (current.interrupted) break;
      if (step.kind === "say") last = await say(step.text);
      else if (step.kind === "slow") await slow(step.seconds);
      else if (step.kind === "tool") await tool(step.name, step.input);
      else if (step.kind === "fail") {
        failed = true;
        last = "API Error: 400 fake failure";
        send(tagged({ type: "system", subtype: "status", status: "requesting" }));
        const synthetic = state.conversation.apiError(last);
        send(tagged({ type: "assistant", message: synthetic.message, error: "unknown" }));
        break;
      } else if (step.kind === "clear") state.conversation = new Conversation(state.conversation.env, state.conversation.cwd, randomUUID());
    }
    const interrupted = current.interrupted;
    if (interrupted) state.conversation.interrupted();
    else await hook("Stop", { stop_hook_active: false });
    current = null;
    send({
      type: "result",
      subtype: interrupted ? "error_during_execution" : "success",
      is_error: interrupted || failed,
      duration_ms: Date.now() - started,
      duration_api_ms: Date.now() - started,
      num_turns: 1,
      result: interrupted ? "[Request interrupted by user]" : last,
      session_id: state.conversation.id,
      total_cost_usd: 0.0012,
      usage: { input_tokens: 10, output_tokens: 5 },
      permission_denials: [],
      uuid: randomUUID(),
    });
  }

  function control(message) {
    const request = message.request ?? {};
    const reply = (response) => send({ type: "control_response", response: { subtype: "success", request_id: message.request_id, response } });
    if (request.subtype === "initialize") {
      reply({ commands: [{ name: "clear", description: "Clear the conversation", argumentHint: "" }], output_style: "default", available_output_styles: ["default"], models: [], account: {} });
    } else if (request.subtype === "interrupt") {
      if (current) current.interrupted = true;
      for (const resolve of pendingPermissions.values()) resolve("interrupted");
      reply({});
    } else {
      send({ type: "control_response", response: { subtype: "error", request_id: message.request_id, error: `Unsupported control request subtype: ${request.subtype}` } });
    }
  }

  if (options.inputFormat !== "stream-json") {
    // One prompt from the arguments, printed per --output-format.
    await turn({ message: { content: options.positional.join(" ") } });
    if (options.outputFormat === "json") process.stdout.write(`${JSON.stringify(result)}\n`);
    else if (options.outputFormat !== "stream-json") process.stdout.write(`${result?.result ?? ""}\n`);
    process.exit(result?.is_error ? 1 : 0);
  }

  const queue = [];
  let running = false;
  let ended = false;
  const drain = async () => {
    if (running) return;
    running = true;
    while (queue.length > 0) await turn(queue.shift());
    running = false;
    if (ended) process.exit(0);
  };
  const lines = createInterface({ input: process.stdin });
  lines.on("line", (line) => {
    if (line.trim() === "") return;
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      process.stderr.write(`Error parsing streaming input line: ${line}\n`);
      process.exit(1);
    }
    if (message.type === "control_request") control(message);
    else if (message.type === "control_response") {
      const resolve = pendingPermissions.get(message.response?.request_id);
      resolve?.(message.response?.response ?? { behavior: "deny" });
    } else if (message.type === "user") {
      queue.push(message);
      void drain();
    }
  });
  lines.on("close", () => {
    ended = true;
    if (!running) process.exit(0);
  });
}
