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
import { plainText } from "./plain-text.ts";

/**
 * System entries that are notes from the TUI's own commands (2.1: `local_command` for the command
 * and its output, `informational` for e.g. an unknown command); older versions wrote them as user text.
 */
const LOCAL_COMMAND_SUBTYPES = new Set(["local_command", "informational"]);
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

/** Claude Code cuts project directory names longer than this and appends a hash. */
const MAX_PROJECT_DIR_CHARS = 200;

async function projectDirs(env: Readonly<Record<string, string>>): Promise<string[]> {
  try {
    return await readdir(join(claudeConfigDir(env), "projects"));
  } catch {
    return [];
  }
}

/** Whether a project directory is this cwd's: its name, or for a long cwd its cut name with a hash. */
function isProjectDirOf(dir: string, cwd: string): boolean {
  const name = projectDirName(cwd);
  if (dir === name) return true;
  return name.length > MAX_PROJECT_DIR_CHARS && dir.startsWith(`${name.slice(0, MAX_PROJECT_DIR_CHARS)}-`);
}

/**
 * The transcript's path in this cwd's project directory, or null when there is none: Claude Code
 * resumes a conversation only from the directory it was started in, so one found under another
 * project would not resume here.
 */
export async function findTranscript(env: Readonly<Record<string, string>>, cwd: string, conversationId: string): Promise<string | null> {
  if (!CONVERSATION_ID_PATTERN.test(conversationId)) return null;
  const direct = transcriptPath(env, cwd, conversationId);
  if (await isFile(direct)) return direct;
  if (projectDirName(cwd).length <= MAX_PROJECT_DIR_CHARS) return null;
  for (const dir of await projectDirs(env)) {
    const candidate = join(claudeConfigDir(env), "projects", dir, `${conversationId}.jsonl`);
    if (isProjectDirOf(dir, cwd) && (await isFile(candidate))) return candidate;
  }
  return null;
}

/** The cwd of the conversation when its transcript is under another project directory (it would not resume here), else null. */
export async function findTranscriptElsewhere(env: Readonly<Record<string, string>>, cwd: string, conversationId: string): Promise<string | null> {
  if (!CONVERSATION_ID_PATTERN.test(conversationId)) return null;
  for (const dir of await projectDirs(env)) {
    if (isProjectDirOf(dir, cwd)) continue;
    const candidate = join(claudeConfigDir(env), "projects", dir, `${conversationId}.jsonl`);
    if (!(await isFile(candidate))) continue;
    // Its lines name the cwd they were written in; the directory name is a lossy fallback.
    const first = (await readHead(candidate)).split("\n").map(lineCwd).find((c) => c !== null);
    return first ?? dir;
  }
  return null;
}

function lineCwd(line: string): string | null {
  try {
    const entry: unknown = JSON.parse(line);
    const cwd = typeof entry === "object" && entry !== null ? (entry as Json).cwd : undefined;
    return typeof cwd === "string" && cwd !== "" ? cwd : null;
  } catch {
    return null;
  }
}

/** The first bytes of a file (enough for its first lines). */
async function readHead(path: string, bytes = 64 * 1024): Promise<string> {
  const file = await open(path, "r");
  try {
    const buffer = Buffer.alloc(bytes);
    const { bytesRead } = await file.read(buffer, 0, bytes, 0);
    return buffer.subarray(0, bytesRead).toString("utf8");
  } finally {
    await file.close();
  }
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
    } else if (entry.type === "system" && LOCAL_COMMAND_SUBTYPES.has(String(entry.subtype)) && typeof entry.content === "string" && uuid !== "") {
      // A slash command typed in the TUI and what it printed (colours and all), or "Unknown command: …".
      const note = userMessage(entry.content, uuid, createdAt);
      if (note) ordered.set(uuid, { ...note, role: "system", parts: note.parts.map((p) => (p.type === "text" ? { type: "service", text: plainText(p.text).trim() } : p)) });
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
