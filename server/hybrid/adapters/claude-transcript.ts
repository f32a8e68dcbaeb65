/**
 * Claude Code's transcript, the conversation's source of truth: one JSON object per line in
 * `<config dir>/projects/<cwd with every [^A-Za-z0-9-] as '-'>/<conversation id>.jsonl`, where the
 * config dir is `$CLAUDE_CONFIG_DIR` or `~/.claude`. Turns typed in the TUI and turns sent from the
 * chat end land in the same file, so the chat history is read from here.
 */
import { open, readdir, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import type { ChatMessage } from "../../contract/chat.ts";
import { CONVERSATION_ID_PATTERN } from "./adapter.ts";
import { AssistantMessages, userMessage } from "./claude-blocks.ts";

/** Only this much of the end of a transcript is read: a chat shows the recent conversation. */
export const MAX_TRANSCRIPT_READ_BYTES = 32 * 1024 * 1024;

type Json = Record<string, unknown>;

export function claudeConfigDir(env: Readonly<Record<string, string>>): string {
  return env.CLAUDE_CONFIG_DIR || join(env.HOME || homedir(), ".claude");
}

export function projectDirName(cwd: string): string {
  return cwd.replace(/[^A-Za-z0-9-]/g, "-");
}

export function transcriptPath(env: Readonly<Record<string, string>>, cwd: string, conversationId: string): string {
  return join(claudeConfigDir(env), "projects", projectDirName(cwd), `${conversationId}.jsonl`);
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/**
 * The transcript's path, or null when there is none yet. Versions that shorten long project
 * directory names put it elsewhere, so the other project directories are searched too.
 */
export async function findTranscript(env: Readonly<Record<string, string>>, cwd: string, conversationId: string): Promise<string | null> {
  if (!CONVERSATION_ID_PATTERN.test(conversationId)) return null;
  const direct = transcriptPath(env, cwd, conversationId);
  if (await isFile(direct)) return direct;
  const projects = join(claudeConfigDir(env), "projects");
  let dirs: string[];
  try {
    dirs = await readdir(projects);
  } catch {
    return null;
  }
  for (const dir of dirs) {
    const candidate = join(projects, dir, `${conversationId}.jsonl`);
    if (await isFile(candidate)) return candidate;
  }
  return null;
}

async function readTail(path: string): Promise<string> {
  const file = await open(path, "r");
  try {
    const { size } = await file.stat();
    const start = Math.max(0, size - MAX_TRANSCRIPT_READ_BYTES);
    const buffer = Buffer.alloc(size - start);
    await file.read(buffer, 0, buffer.length, start);
    const text = buffer.toString("utf8");
    // A read that starts mid-file starts mid-line: drop the partial first line.
    return start === 0 ? text : text.slice(text.indexOf("\n") + 1);
  } finally {
    await file.close();
  }
}

function timeOf(entry: Json): number {
  const ms = typeof entry.timestamp === "string" ? Date.parse(entry.timestamp) : NaN;
  return Number.isFinite(ms) && ms >= 0 ? ms : 0;
}

/** Transcript lines as chat messages, in order; lines it does not understand are skipped. */
export function messagesFromTranscript(text: string): ChatMessage[] {
  const ordered = new Map<string, ChatMessage>();
  const assistant = new AssistantMessages();
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    let entry: Json;
    try {
      const parsed: unknown = JSON.parse(line);
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) continue;
      entry = parsed as Json;
    } catch {
      continue; // a line being written right now, or damage: the rest still reads
    }
    if (entry.isSidechain === true || entry.isMeta === true) continue;
    const message = (typeof entry.message === "object" && entry.message !== null ? entry.message : {}) as Json;
    const uuid = typeof entry.uuid === "string" ? entry.uuid : "";
    const createdAt = timeOf(entry);
    if (entry.type === "user") {
      if (entry.isCompactSummary === true) {
        ordered.set(uuid, { id: uuid, role: "system", parts: [{ type: "service", text: "The earlier conversation was compacted" }], createdAt });
        continue;
      }
      const user = userMessage(message.content, uuid, createdAt);
      if (user) ordered.set(user.id, user);
    } else if (entry.type === "assistant") {
      const id = typeof message.id === "string" && message.id !== "" ? message.id : uuid;
      if (id === "") continue;
      ordered.set(id, assistant.merge(id, message.content, createdAt));
    } else if (entry.type === "system" && entry.subtype === "compact_boundary" && uuid !== "") {
      ordered.set(uuid, { id: uuid, role: "system", parts: [{ type: "service", text: "Conversation compacted" }], createdAt });
    }
  }
  return [...ordered.values()];
}

/** The conversation's messages, or none when it has no transcript yet. */
export async function readClaudeTranscript(env: Readonly<Record<string, string>>, cwd: string, conversationId: string): Promise<ChatMessage[]> {
  const path = await findTranscript(env, cwd, conversationId);
  if (!path) return [];
  return messagesFromTranscript(await readTail(path));
}
