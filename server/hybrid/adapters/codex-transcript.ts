/**
 * Codex's transcripts ("rollouts"): `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`
 * (CODEX_HOME defaults to `~/.codex`), one `{timestamp, type, payload}` object per line. The chat
 * history reads its `response_item` lines; the first line (`session_meta`) names the id and cwd.
 */
import { open, readdir, readFile, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import type { ChatMessage, ChatPart } from "../../contract/chat.ts";
import { MAX_TOOL_RESULT_CHARS } from "./claude-blocks.ts";

/** The first line of a rollout (`session_meta`) fits in this many bytes (it carries instructions). */
const META_READ_BYTES = 256 * 1024;
/** Text Codex adds to user turns for the model (environment, instructions), not typed by anyone. */
const INJECTED_USER_TEXT = /^\s*(<environment_context>|<user_instructions>|# AGENTS\.md)/;

type Json = Record<string, unknown>;

export function codexHome(env: Readonly<Record<string, string>>): string {
  return env.CODEX_HOME || join(env.HOME || homedir(), ".codex");
}

/** Every rollout file, newest day first. */
async function rollouts(env: Readonly<Record<string, string>>): Promise<string[]> {
  const root = join(codexHome(env), "sessions");
  const found: string[] = [];
  const walk = async (dir: string, depth: number): Promise<void> => {
    let names: string[];
    try {
      names = (await readdir(dir)).sort().reverse();
    } catch {
      return;
    }
    for (const name of names) {
      const path = join(dir, name);
      if (depth < 3) await walk(path, depth + 1);
      else if (name.startsWith("rollout-") && name.endsWith(".jsonl")) found.push(path);
    }
  };
  await walk(root, 0);
  return found;
}

export async function findRollout(env: Readonly<Record<string, string>>, conversationId: string): Promise<string | null> {
  if (conversationId === "") return null;
  return (await rollouts(env)).find((path) => path.endsWith(`-${conversationId}.jsonl`)) ?? null;
}

async function sessionMeta(path: string): Promise<Json | null> {
  const file = await open(path, "r");
  try {
    const buffer = Buffer.alloc(META_READ_BYTES);
    const { bytesRead } = await file.read(buffer, 0, buffer.length, 0);
    const first = buffer.subarray(0, bytesRead).toString("utf8").split("\n")[0] ?? "";
    const entry = JSON.parse(first) as Json;
    return entry.type === "session_meta" && typeof entry.payload === "object" && entry.payload !== null ? (entry.payload as Json) : null;
  } catch {
    return null;
  } finally {
    await file.close();
  }
}

/** The conversation a TUI in `cwd` wrote to since `since` (Codex has no hook to say so). */
export async function locateRollout(env: Readonly<Record<string, string>>, cwd: string, since: number): Promise<string | null> {
  let best: { id: string; mtime: number } | null = null;
  for (const path of await rollouts(env)) {
    const { mtimeMs } = await stat(path).catch(() => ({ mtimeMs: 0 }));
    if (mtimeMs < since || (best && mtimeMs <= best.mtime)) continue;
    const meta = await sessionMeta(path);
    if (meta && meta.cwd === cwd && typeof meta.id === "string") best = { id: meta.id, mtime: mtimeMs };
  }
  return best?.id ?? null;
}

function textOf(content: unknown): string {
  if (!Array.isArray(content)) return typeof content === "string" ? content : "";
  return content
    .map((c) => (typeof c === "object" && c !== null && typeof (c as Json).text === "string" ? ((c as Json).text as string) : ""))
    .join("");
}

function cut(text: string): string {
  return text.length <= MAX_TOOL_RESULT_CHARS ? text : `${text.slice(0, MAX_TOOL_RESULT_CHARS)}\n… (${text.length - MAX_TOOL_RESULT_CHARS} more characters)`;
}

/** Rollout lines as chat messages (ids are line positions, stable for one file). */
export function messagesFromRollout(text: string): ChatMessage[] {
  const messages: ChatMessage[] = [];
  text.split("\n").forEach((line, index) => {
    let entry: Json;
    try {
      entry = JSON.parse(line) as Json;
    } catch {
      return;
    }
    if (entry.type !== "response_item" || typeof entry.payload !== "object" || entry.payload === null) return;
    const item = entry.payload as Json;
    const createdAt = typeof entry.timestamp === "string" && Number.isFinite(Date.parse(entry.timestamp)) ? Date.parse(entry.timestamp) : 0;
    const id = `codex-${index}`;
    let role: ChatMessage["role"] = "assistant";
    let parts: ChatPart[] = [];
    if (item.type === "message") {
      const body = textOf(item.content);
      if (item.role === "user" && INJECTED_USER_TEXT.test(body)) return;
      if (item.role !== "user" && item.role !== "assistant") return;
      role = item.role;
      parts = [{ type: "text", text: body }];
    } else if (item.type === "reasoning") {
      const summary = Array.isArray(item.summary) ? textOf(item.summary) : "";
      if (summary === "") return;
      parts = [{ type: "thinking", text: summary }];
    } else if (item.type === "function_call" || item.type === "custom_tool_call") {
      let input: unknown = item.arguments ?? item.input ?? {};
      if (typeof input === "string") {
        try {
          input = JSON.parse(input);
        } catch {
          // kept as the string the model wrote
        }
      }
      parts = [{ type: "tool_call", toolUseId: String(item.call_id ?? id), name: String(item.name ?? "tool"), input }];
    } else if (item.type === "function_call_output" || item.type === "custom_tool_call_output") {
      const output = typeof item.output === "string" ? item.output : JSON.stringify(item.output ?? "");
      role = "user";
      parts = [{ type: "tool_result", toolUseId: String(item.call_id ?? id), content: cut(output), isError: false }];
    } else return;
    messages.push({ id, role, parts, createdAt });
  });
  return messages;
}

export async function readCodexTranscript(env: Readonly<Record<string, string>>, conversationId: string): Promise<ChatMessage[]> {
  const path = await findRollout(env, conversationId);
  return path ? messagesFromRollout(await readFile(path, "utf8")) : [];
}
