/**
 * Claude's content blocks (the Anthropic message format, as both the JSONL transcript and the
 * stream-json output carry them) as chat parts and messages. Shared by the transcript reader and
 * the chat driver, so a message has the same id and shape from either source.
 */
import type { ChatMessage, ChatPart } from "../../contract/chat.ts";
import { plainText } from "./plain-text.ts";

/** A tool result longer than this is cut: a chat shows what a tool said, not a whole file. */
export const MAX_TOOL_RESULT_CHARS = 64 * 1024;
/** An image whose base64 is longer than this is not sent (a phone would stall on it). */
export const MAX_IMAGE_BASE64_CHARS = 2 * 1024 * 1024;

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function text(value: unknown): string {
  return typeof value === "string" ? value : "";
}

function cut(content: string): string {
  if (content.length <= MAX_TOOL_RESULT_CHARS) return content;
  return `${content.slice(0, MAX_TOOL_RESULT_CHARS)}\n… (${content.length - MAX_TOOL_RESULT_CHARS} more characters)`;
}

function imagePart(block: Json): ChatPart {
  const source = isObject(block.source) ? block.source : {};
  const data = text(source.data);
  if (source.type !== "base64" || data === "") return { type: "service", text: "(an image)" };
  if (data.length > MAX_IMAGE_BASE64_CHARS) return { type: "service", text: "(an image too large to show)" };
  return { type: "image", mediaType: text(source.media_type) || "image/png", data };
}

/** Text Claude Code puts in user turns for its own bookkeeping, shown as a service line. */
function serviceText(value: string): string | null {
  if (value.startsWith("[Request interrupted by user")) return value.replace(/^\[|\]$/g, "");
  const command = /<command-name>([^<]*)<\/command-name>/.exec(value);
  if (command) return `ran ${command[1]!.trim()}`;
  const stdout = /<local-command-stdout>([\s\S]*)<\/local-command-stdout>/.exec(value);
  if (stdout) return plainText(stdout[1]!).trim() || "(no output)";
  const stderr = /<local-command-stderr>([\s\S]*)<\/local-command-stderr>/.exec(value);
  if (stderr) return plainText(stderr[1]!).trim() || "(no output)";
  return null;
}

/** One assistant block as one part (block index = part index, which deltas rely on). */
export function assistantPart(block: unknown): ChatPart {
  if (!isObject(block)) return { type: "service", text: "(unreadable content)" };
  switch (block.type) {
    case "text":
      return { type: "text", text: text(block.text) };
    case "thinking":
      return { type: "thinking", text: text(block.thinking) };
    case "redacted_thinking":
      return { type: "thinking", text: "(redacted)" };
    case "tool_use":
    case "server_tool_use":
      return { type: "tool_call", toolUseId: text(block.id), name: text(block.name), input: block.input ?? {} };
    case "image":
      return imagePart(block);
    default:
      return { type: "service", text: `(${String(block.type)})` };
  }
}

/** The empty part a streamed block starts as (`content_block_start`). */
export function emptyStreamedPart(block: unknown): ChatPart {
  if (isObject(block) && (block.type === "tool_use" || block.type === "server_tool_use")) return assistantPart({ ...block, input: block.input ?? {} });
  if (isObject(block) && (block.type === "thinking" || block.type === "redacted_thinking")) return { type: "thinking", text: "" };
  return { type: "text", text: "" };
}

function toolResultParts(block: Json): ChatPart[] {
  const parts: ChatPart[] = [];
  let content = "";
  if (typeof block.content === "string") content = block.content;
  else if (Array.isArray(block.content)) {
    const texts: string[] = [];
    for (const item of block.content) {
      if (isObject(item) && item.type === "text") texts.push(text(item.text));
      else if (isObject(item) && item.type === "image") parts.push(imagePart(item));
    }
    content = texts.join("\n");
  }
  parts.unshift({ type: "tool_result", toolUseId: text(block.tool_use_id), content: cut(content), isError: block.is_error === true });
  return parts;
}

/**
 * A user turn as a chat message, or null when there is nothing to show. Tool results get the id
 * `tr-<tool_use_id>`, the same from the transcript and the live stream; typed text keeps `uuid`.
 */
export function userMessage(content: unknown, uuid: string, createdAt: number): ChatMessage | null {
  const parts: ChatPart[] = [];
  let firstToolUse: string | null = null;
  const addText = (value: string) => {
    const service = serviceText(value);
    parts.push(service === null ? { type: "text", text: value } : { type: "service", text: service });
  };
  if (typeof content === "string") addText(content);
  else if (Array.isArray(content)) {
    for (const block of content) {
      if (!isObject(block)) continue;
      if (block.type === "text") addText(text(block.text));
      else if (block.type === "image") parts.push(imagePart(block));
      else if (block.type === "tool_result") {
        firstToolUse ??= text(block.tool_use_id);
        parts.push(...toolResultParts(block));
      }
    }
  }
  if (parts.length === 0) return null;
  const id = firstToolUse !== null ? `tr-${firstToolUse}` : uuid;
  if (id === "") return null;
  return { id, role: "user", parts, createdAt };
}

/**
 * Builds assistant messages from blocks that arrive one at a time (Claude Code writes one
 * transcript line, and one stream-json `assistant` event, per content block, all with the API
 * message's id) or all at once. Streamed blocks (`content_block_start`) take their index's place.
 */
export class AssistantMessages {
  private readonly messages = new Map<string, { message: ChatMessage; finished: number }>();

  private entry(id: string, createdAt: number, turnId?: string): { message: ChatMessage; finished: number } {
    let entry = this.messages.get(id);
    if (!entry) {
      const message: ChatMessage = { id, role: "assistant", parts: [], createdAt };
      if (turnId !== undefined) message.turnId = turnId;
      entry = { message, finished: 0 };
      this.messages.set(id, entry);
    }
    return entry;
  }

  /** Blocks of one event: a single block is the next one; several are the message so far. */
  merge(id: string, blocks: unknown, createdAt: number, turnId?: string): ChatMessage {
    const entry = this.entry(id, createdAt, turnId);
    const list = Array.isArray(blocks) ? blocks : [];
    if (list.length === 1) entry.message.parts[entry.finished++] = assistantPart(list[0]);
    else if (list.length > 1) {
      list.forEach((block, i) => (entry.message.parts[i] = assistantPart(block)));
      entry.finished = Math.max(entry.finished, list.length);
    }
    return copy(entry.message);
  }

  /** A streamed block began at `index`. */
  startBlock(id: string, index: number, block: unknown, createdAt: number, turnId?: string): ChatMessage {
    const entry = this.entry(id, createdAt, turnId);
    if (index >= entry.finished) {
      for (let i = entry.message.parts.length; i < index; i++) entry.message.parts[i] = { type: "text", text: "" };
      entry.message.parts[index] = emptyStreamedPart(block);
    }
    return copy(entry.message);
  }

  /** A streamed delta, kept so that a later single-block event lands at the right index. */
  appendText(id: string, index: number, value: string): void {
    const part = this.messages.get(id)?.message.parts[index];
    if (part && (part.type === "text" || part.type === "thinking")) part.text += value;
  }

  all(): ChatMessage[] {
    return [...this.messages.values()].map((e) => e.message);
  }
}

function copy(message: ChatMessage): ChatMessage {
  return { ...message, parts: message.parts.map((p) => ({ ...p })) };
}
