/**
 * A mock Anthropic Messages API on 127.0.0.1 for driving the real Claude Code in tests
 * (`ANTHROPIC_BASE_URL` + a dummy `ANTHROPIC_API_KEY`): `POST /v1/messages` streams SSE
 * (message_start, content blocks with text/input_json deltas, message_delta, message_stop) or
 * answers an API error. Stateless scripting: a rule is picked by the conversation's last typed
 * prompt, and its n-th reply is sent when n assistant messages followed that prompt, so tool
 * loops (tool_use → tool_result → next reply) replay the same way at either end and after a move.
 * Requests without tools (titles, summaries) get a short text reply.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { isObject, json, MockModelApi, readJsonBody, type Json } from "./mock-model-api.ts";

export type MockReply =
  | { text: string; chunkDelayMs?: number }
  | { tool: string; input: unknown; text?: string }
  /** an HTTP error answered instead of a stream (e.g. 400 invalid_request_error, 529 overloaded_error) */
  | { error: { status: number; type: string; message: string } }
  /** streams "." every `everyMs` until the client goes away (an interrupt) or `ms` pass */
  | { hang: { ms: number; everyMs?: number } };

export type MockRule = { match: string | RegExp; replies: MockReply[] };

export type RecordedRequest = { path: string; body: Json; prompt: string | null; step: number; main: boolean };

/** Text reply pieces: small enough that a stream has several deltas. */
const TEXT_CHUNK_CHARS = 12;
/** How long a hang reply streams before it ends by itself. */
const DEFAULT_HANG_TICK_MS = 200;

/** Text Claude Code adds to a user message itself (context, reminders): never what the user typed. */
const INJECTED = /^\s*<system-reminder>/;

/**
 * What the user typed last in a user message. Claude Code merges consecutive user messages into one
 * (a prompt after an API error whose synthetic reply is never sent), so it is the last text block.
 */
function promptOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  const typed = content.filter((b) => isObject(b) && b.type === "text" && typeof b.text === "string" && !INJECTED.test(b.text as string));
  return typed.length === 0 ? "" : ((typed.at(-1) as Json).text as string);
}

function hasToolResult(content: unknown): boolean {
  return Array.isArray(content) && content.some((b) => isObject(b) && b.type === "tool_result");
}

/** The last prompt a person typed (a user message with text and no tool results) and how many assistant messages followed it. */
export function promptAndStep(messages: unknown): { prompt: string | null; step: number } {
  const list = Array.isArray(messages) ? messages : [];
  let step = 0;
  for (let i = list.length - 1; i >= 0; i--) {
    const m = list[i];
    if (!isObject(m)) continue;
    if (m.role === "assistant") step++;
    else if (m.role === "user" && !hasToolResult(m.content)) {
      const text = promptOf(m.content);
      if (text.trim() !== "") return { prompt: text, step };
    }
  }
  return { prompt: null, step };
}

export class MockAnthropic extends MockModelApi<MockReply> {
  readonly requests: RecordedRequest[] = [];

  /** Main-loop requests (with tools) whose prompt contains `match`. */
  mainRequests(match?: string): RecordedRequest[] {
    return this.requests.filter((r) => r.main && (match === undefined || (r.prompt ?? "").includes(match)));
  }

  protected async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readJsonBody(req);
    const path = (req.url ?? "").split("?")[0]!;
    if (req.method !== "POST" || !path.endsWith("/v1/messages")) {
      if (path.endsWith("/count_tokens")) return json(res, 200, { input_tokens: 100 });
      return json(res, 404, { type: "error", error: { type: "not_found_error", message: `no ${req.method} ${path} here` } });
    }
    const { prompt, step } = promptAndStep(body.messages);
    const main = Array.isArray(body.tools) && body.tools.length > 0;
    this.requests.push({ path, body, prompt, step, main });
    const replies = main && prompt !== null ? this.rulesFor(prompt) : undefined;
    const reply: MockReply = replies ? (replies[step] ?? { text: "Done." }) : { text: main ? `You said: ${prompt ?? ""}`.slice(0, 200) : "Mock title" };
    if ("error" in reply) return json(res, reply.error.status, { type: "error", error: { type: reply.error.type, message: reply.error.message } });
    await this.stream(req, res, body, reply);
  }

  private async stream(req: IncomingMessage, res: ServerResponse, body: Json, reply: Exclude<MockReply, { error: unknown }>): Promise<void> {
    const id = `msg_mock${String(++this.counter).padStart(6, "0")}${Date.now().toString(36)}`;
    let gone = false;
    res.on("close", () => (gone = true));
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", "request-id": `req_${id}` });
    const send = (type: string, data: Json) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const model = typeof body.model === "string" ? body.model : "claude-mock";
    send("message_start", { message: { id, type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 50, output_tokens: 1 } } });
    send("ping", {});
    let index = 0;
    const textBlock = async (text: string, delayMs = 0) => {
      send("content_block_start", { index, content_block: { type: "text", text: "" } });
      for (let i = 0; i < text.length && !gone; i += TEXT_CHUNK_CHARS) {
        send("content_block_delta", { index, delta: { type: "text_delta", text: text.slice(i, i + TEXT_CHUNK_CHARS) } });
        if (delayMs > 0) await sleep(delayMs);
      }
      send("content_block_stop", { index });
      index++;
    };
    let stopReason = "end_turn";
    if ("text" in reply && !("tool" in reply)) await textBlock(reply.text, reply.chunkDelayMs);
    else if ("tool" in reply) {
      if (reply.text) await textBlock(reply.text);
      const toolId = `toolu_mock${String(this.counter).padStart(6, "0")}${Date.now().toString(36)}`;
      send("content_block_start", { index, content_block: { type: "tool_use", id: toolId, name: reply.tool, input: {} } });
      send("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: JSON.stringify(reply.input) } });
      send("content_block_stop", { index });
      stopReason = "tool_use";
    } else if ("hang" in reply) {
      send("content_block_start", { index, content_block: { type: "text", text: "" } });
      send("content_block_delta", { index, delta: { type: "text_delta", text: "Working" } });
      const until = Date.now() + reply.hang.ms;
      while (!gone && Date.now() < until) {
        await sleep(reply.hang.everyMs ?? DEFAULT_HANG_TICK_MS);
        send("content_block_delta", { index, delta: { type: "text_delta", text: "." } });
      }
      send("content_block_stop", { index });
    }
    if (gone) return;
    send("message_delta", { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 20 } });
    send("message_stop", {});
    res.end();
    void req;
  }
}
