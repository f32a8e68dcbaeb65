/**
 * A mock OpenAI Responses API on 127.0.0.1 for driving the real Codex CLI in tests (a custom
 * `model_provider` in `$CODEX_HOME/config.toml` whose `base_url` is this server): `POST
 * /v1/responses` streams SSE (response.created, output items with text deltas or a function call,
 * response.completed) or answers an error. Scripted like MockAnthropic: a rule is picked by the
 * last typed prompt, and its n-th reply is sent when n tool outputs followed that prompt.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { isObject, json, MockModelApi, readJsonBody, type Json } from "./mock-model-api.ts";

export type MockResponsesReply =
  | { text: string }
  /** a shell command the model wants run (Codex's shell tool; its argument shape is read from the request's tools) */
  | { shell: string }
  | { error: { status: number; message: string } }
  /** streams "." until the client goes away (an interrupt) or `ms` pass */
  | { hang: { ms: number } };

export type RecordedResponsesRequest = { body: Json; prompt: string | null; step: number };

/** How often a hang reply streams a piece. */
const HANG_TICK_MS = 200;

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((c) => (isObject(c) && typeof c.text === "string" ? c.text : "")).join("");
}

/** Codex prepends context (environment, AGENTS.md, permissions) as user or developer messages: not typed prompts. */
const INJECTED = /^\s*(<environment_context>|<user_instructions>|<permissions instructions>|# AGENTS\.md|<INSTRUCTIONS>)/;

export function responsesPromptAndStep(input: unknown): { prompt: string | null; step: number } {
  const list = Array.isArray(input) ? input : [];
  let step = 0;
  for (let i = list.length - 1; i >= 0; i--) {
    const item = list[i];
    if (!isObject(item)) continue;
    if (item.type === "function_call_output" || item.type === "custom_tool_call_output") step++;
    else if (item.type === "message" && item.role === "user") {
      const text = textOf(item.content);
      if (text.trim() !== "" && !INJECTED.test(text)) return { prompt: text, step };
    }
  }
  return { prompt: null, step };
}

export class MockOpenAI extends MockModelApi<MockResponsesReply> {
  readonly requests: RecordedResponsesRequest[] = [];

  /** The `[model_providers.mock]` config.toml that points Codex here. */
  configToml(extra = ""): string {
    return [
      `model = "mock-model"`,
      `model_provider = "mock"`,
      extra,
      `[model_providers.mock]`,
      `name = "mock"`,
      `base_url = "${this.url}/v1"`,
      `wire_api = "responses"`,
      `request_max_retries = 0`,
      `stream_max_retries = 0`,
      ``,
    ].join("\n");
  }

  protected async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readJsonBody(req);
    const path = (req.url ?? "").split("?")[0]!;
    if (req.method === "GET" && path.endsWith("/models")) return json(res, 200, { object: "list", data: [{ id: "mock-model", object: "model" }], models: [] });
    if (req.method !== "POST" || !path.endsWith("/responses")) return json(res, 404, { error: { message: `no ${req.method} ${path} here`, type: "not_found" } });
    const { prompt, step } = responsesPromptAndStep(body.input);
    this.requests.push({ body, prompt, step });
    const replies = prompt !== null ? this.rulesFor(prompt) : undefined;
    const reply: MockResponsesReply = replies ? (replies[step] ?? { text: "Done." }) : { text: `You said: ${prompt ?? ""}`.slice(0, 200) };
    if ("error" in reply) return json(res, reply.error.status, { error: { message: reply.error.message, type: "invalid_request_error", code: null } });
    await this.stream(res, body, reply);
  }

  private shellCall(body: Json, command: string): { name: string; arguments: string } {
    const tools = Array.isArray(body.tools) ? (body.tools as Json[]) : [];
    const names = tools.map((t) => String(t.name ?? (isObject(t.function) ? t.function.name : "")));
    if (names.includes("shell_command")) return { name: "shell_command", arguments: JSON.stringify({ command }) };
    if (names.includes("exec_command")) return { name: "exec_command", arguments: JSON.stringify({ cmd: command }) };
    return { name: "shell", arguments: JSON.stringify({ command: ["bash", "-lc", command] }) };
  }

  private async stream(res: ServerResponse, body: Json, reply: Exclude<MockResponsesReply, { error: unknown }>): Promise<void> {
    const n = ++this.counter;
    const responseId = `resp_mock${n}`;
    let gone = false;
    res.on("close", () => (gone = true));
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    let sequence = 0;
    const send = (type: string, data: Json) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`);
    const model = typeof body.model === "string" ? body.model : "mock-model";
    const response = (status: string, output: unknown[]) => ({ id: responseId, object: "response", created_at: Math.floor(Date.now() / 1000), status, model, output });
    send("response.created", { response: response("in_progress", []) });
    const output: unknown[] = [];
    if ("shell" in reply) {
      const call = this.shellCall(body, reply.shell);
      const item = { type: "function_call", id: `fc_mock${n}`, call_id: `call_mock${n}`, name: call.name, arguments: call.arguments, status: "completed" };
      send("response.output_item.added", { output_index: 0, item: { ...item, arguments: "" } });
      send("response.function_call_arguments.delta", { output_index: 0, item_id: item.id, delta: call.arguments });
      send("response.output_item.done", { output_index: 0, item });
      output.push(item);
    } else {
      const id = `msg_mock${n}`;
      send("response.output_item.added", { output_index: 0, item: { type: "message", id, role: "assistant", status: "in_progress", content: [] } });
      send("response.content_part.added", { output_index: 0, item_id: id, content_index: 0, part: { type: "output_text", text: "", annotations: [] } });
      let text = "";
      const delta = (piece: string) => {
        text += piece;
        send("response.output_text.delta", { output_index: 0, item_id: id, content_index: 0, delta: piece });
      };
      if ("text" in reply) delta(reply.text);
      else {
        delta("Working");
        const until = Date.now() + reply.hang.ms;
        while (!gone && Date.now() < until) {
          await new Promise((r) => setTimeout(r, HANG_TICK_MS));
          delta(".");
        }
      }
      if (gone) return;
      send("response.output_text.done", { output_index: 0, item_id: id, content_index: 0, text });
      const item = { type: "message", id, role: "assistant", status: "completed", content: [{ type: "output_text", text, annotations: [] }] };
      send("response.output_item.done", { output_index: 0, item });
      output.push(item);
    }
    send("response.completed", { response: { ...response("completed", output), usage: { input_tokens: 50, input_tokens_details: { cached_tokens: 0 }, output_tokens: 20, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 70 } } });
    res.end();
  }
}
