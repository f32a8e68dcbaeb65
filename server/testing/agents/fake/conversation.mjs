// The fake's transcript, shaped like Claude Code's: one JSON object per line in
// `<CLAUDE_CONFIG_DIR or ~/.claude>/projects/<cwd with [^A-Za-z0-9-] as '-'>/<id>.jsonl`,
// user lines, one assistant line per content block (sharing the API message id), tool results
// as user lines, and the bookkeeping lines real transcripts hold (file-history snapshots).
import { randomBytes, randomUUID } from "node:crypto";
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";

export const FAKE_VERSION = "2.0.0-fake";
export const FAKE_MODEL = "claude-fake-1";

export function configDir(env) {
  return env.CLAUDE_CONFIG_DIR || join(env.HOME || homedir(), ".claude");
}

export function transcriptFile(env, cwd, id) {
  return join(configDir(env), "projects", cwd.replace(/[^A-Za-z0-9-]/g, "-"), `${id}.jsonl`);
}

export function messageId() {
  return `msg_${randomBytes(12).toString("hex")}`;
}

export function toolUseId() {
  return `toolu_${randomBytes(12).toString("hex")}`;
}

export class Conversation {
  constructor(env, cwd, id) {
    this.env = env;
    this.cwd = cwd;
    this.id = id;
    this.lastUuid = null;
    this.messages = 0;
  }

  get path() {
    return transcriptFile(this.env, this.cwd, this.id);
  }

  get exists() {
    return existsSync(this.path);
  }

  /** Pick up where the file ends (the parentUuid chain). */
  load() {
    const lines = readFileSync(this.path, "utf8").split("\n").filter(Boolean);
    for (const line of lines) {
      try {
        const entry = JSON.parse(line);
        if (entry.uuid) this.lastUuid = entry.uuid;
        if (entry.type === "user" || entry.type === "assistant") this.messages++;
      } catch {
        // damaged line: skipped, as the real reader does
      }
    }
  }

  /** Continue under a new id with the history copied (what some versions do on --resume). */
  fork(newId) {
    const text = readFileSync(this.path, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((line) => {
        const entry = JSON.parse(line);
        if (entry.sessionId) entry.sessionId = newId;
        return JSON.stringify(entry);
      })
      .join("\n");
    const next = new Conversation(this.env, this.cwd, newId);
    mkdirSync(dirname(next.path), { recursive: true });
    writeFileSync(next.path, `${text}\n`);
    next.load();
    return next;
  }

  append(entry) {
    mkdirSync(dirname(this.path), { recursive: true });
    appendFileSync(this.path, `${JSON.stringify(entry)}\n`);
  }

  entry(type, fields, uuid = randomUUID()) {
    const entry = {
      parentUuid: this.lastUuid,
      isSidechain: false,
      userType: "external",
      cwd: this.cwd,
      sessionId: this.id,
      version: FAKE_VERSION,
      gitBranch: "",
      type,
      ...fields,
      uuid,
      timestamp: new Date().toISOString(),
    };
    this.lastUuid = uuid;
    this.messages++;
    this.append(entry);
    return entry;
  }

  userPrompt(text, uuid) {
    const id = uuid || randomUUID();
    this.append({ type: "file-history-snapshot", messageId: id, snapshot: { messageId: id, trackedFileBackups: {}, timestamp: new Date().toISOString() }, isSnapshotUpdate: false });
    return this.entry("user", { message: { role: "user", content: text } }, id);
  }

  assistantBlock(msgId, block) {
    return this.entry("assistant", {
      message: {
        id: msgId,
        type: "message",
        role: "assistant",
        model: FAKE_MODEL,
        content: [block],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      },
      requestId: `req_${randomBytes(8).toString("hex")}`,
    });
  }

  toolResult(toolUse, content, isError) {
    return this.entry("user", {
      message: { role: "user", content: [{ tool_use_id: toolUse, type: "tool_result", content, is_error: isError }] },
      toolUseResult: isError ? `Error: ${content}` : { stdout: content, stderr: "", interrupted: false, isImage: false },
    });
  }

  interrupted() {
    return this.entry("user", { message: { role: "user", content: [{ type: "text", text: "[Request interrupted by user]" }] } });
  }

  apiError(text) {
    return this.entry("assistant", {
      message: { id: messageId(), type: "message", role: "assistant", model: "<synthetic>", content: [{ type: "text", text }], stop_reason: "stop_sequence", stop_sequence: "", usage: { input_tokens: 0, output_tokens: 0 } },
      isApiErrorMessage: true,
    });
  }
}

/** `<pid> <conversationId> <start|exit>` lines, so tests can prove no two processes overlapped. */
export function logPid(env, id, what) {
  const path = env.FAKE_CLAUDE_PID_LOG;
  if (path) appendFileSync(path, `${process.pid} ${id} ${what}\n`);
}
