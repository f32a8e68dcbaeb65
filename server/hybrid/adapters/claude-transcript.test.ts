import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { findTranscript, findTranscriptElsewhere, messagesFromTranscript, projectDirName, readClaudeTranscript, transcriptPath } from "./claude-transcript.ts";

const line = (entry: object) => JSON.stringify({ isSidechain: false, timestamp: "2025-01-01T00:00:00.000Z", ...entry });

describe("Claude transcripts", () => {
  let root = "";
  afterEach(() => root && rmSync(root, { recursive: true, force: true }));

  it("names the project directory by the cwd with every [^A-Za-z0-9-] as '-'", () => {
    expect(projectDirName("/home/me/my_project.v2/x y")).toBe("-home-me-my-project-v2-x-y");
    expect(transcriptPath({ CLAUDE_CONFIG_DIR: "/cfg" }, "/w", "abc")).toBe("/cfg/projects/-w/abc.jsonl");
    expect(transcriptPath({ HOME: "/home/me" }, "/w", "abc")).toBe("/home/me/.claude/projects/-w/abc.jsonl");
  });

  it("reads typed turns, per-block assistant lines, tool results and Claude Code's own notes as chat messages", () => {
    const text = [
      line({ type: "summary", summary: "x" }),
      line({ type: "user", uuid: "u1", message: { role: "user", content: "run the tests" } }),
      line({ type: "assistant", uuid: "a1", message: { id: "msg_1", role: "assistant", content: [{ type: "thinking", thinking: "hm" }] } }),
      line({ type: "assistant", uuid: "a2", message: { id: "msg_1", role: "assistant", content: [{ type: "text", text: "Running." }] } }),
      line({ type: "assistant", uuid: "a3", message: { id: "msg_1", role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "npm test" } }] } }),
      line({ type: "user", uuid: "u2", message: { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: "ok" }], is_error: false }] } }),
      line({ type: "user", uuid: "side", isSidechain: true, message: { role: "user", content: "subagent" } }),
      line({ type: "user", uuid: "meta", isMeta: true, message: { role: "user", content: "Caveat: …" } }),
      '{"type":"user","uuid":"broken"',
      line({ type: "user", uuid: "u3", message: { role: "user", content: [{ type: "text", text: "[Request interrupted by user]" }] } }),
      line({ type: "user", uuid: "u4", message: { role: "user", content: "<command-name>/compact</command-name>" } }),
    ].join("\n");
    const messages = messagesFromTranscript(text);
    expect(messages.map((m) => [m.id, m.role, m.parts])).toEqual([
      ["u1", "user", [{ type: "text", text: "run the tests" }]],
      ["msg_1", "assistant", [{ type: "thinking", text: "hm" }, { type: "text", text: "Running." }, { type: "tool_call", toolUseId: "toolu_1", name: "Bash", input: { command: "npm test" } }]],
      ["tr-toolu_1", "user", [{ type: "tool_result", toolUseId: "toolu_1", content: "ok", isError: false }]],
      ["u3", "user", [{ type: "service", text: "Request interrupted by user" }]],
      ["u4", "user", [{ type: "service", text: "ran /compact" }]],
    ]);
    expect(messages[0]!.createdAt).toBe(Date.parse("2025-01-01T00:00:00.000Z"));
  });

  it("finds a transcript only where it resumes: this cwd's project directory (cut with a hash for a long cwd); one under another is elsewhere", async () => {
    root = mkdtempSync(join(tmpdir(), "transcripts-"));
    const env = { CLAUDE_CONFIG_DIR: root };
    const put = (dir: string, id: string, cwd: string) => {
      mkdirSync(join(root, "projects", dir), { recursive: true });
      writeFileSync(join(root, "projects", dir, `${id}.jsonl`), `${line({ type: "user", uuid: "u1", cwd, message: { role: "user", content: "hi" } })}\n`);
    };
    put("-work-other", "conv-1", "/work/other");
    expect(await findTranscript(env, "/work/other", "conv-1")).toBe(join(root, "projects", "-work-other", "conv-1.jsonl"));
    expect((await readClaudeTranscript(env, "/work/other", "conv-1")).map((m) => m.id)).toEqual(["u1"]);
    expect(await findTranscript(env, "/somewhere/else", "conv-1")).toBeNull();
    expect(await readClaudeTranscript(env, "/somewhere/else", "conv-1")).toEqual([]);
    expect(await findTranscriptElsewhere(env, "/somewhere/else", "conv-1")).toBe("/work/other");
    expect(await findTranscriptElsewhere(env, "/work/other", "conv-1")).toBeNull();

    const long = `/${"deep/".repeat(50)}project`;
    put(`${projectDirName(long).slice(0, 200)}-1a2b3c`, "conv-2", long);
    expect(await findTranscript(env, long, "conv-2")).toBe(join(root, "projects", `${projectDirName(long).slice(0, 200)}-1a2b3c`, "conv-2.jsonl"));
    expect(await findTranscript(env, "/x", "../../etc/passwd")).toBeNull();
    expect(await readClaudeTranscript(env, "/x", "missing")).toEqual([]);
  });

  it("shows local-command output as plain text, without the escape sequences the command printed", () => {
    const text = [
      line({ type: "user", uuid: "c1", message: { role: "user", content: "<local-command-stdout>\x1b[1mTotal cost:\x1b[22m \x1b[32m$0.01\x1b[39m\x1b(B\x0f</local-command-stdout>" } }),
      line({ type: "user", uuid: "c2", message: { role: "user", content: "<local-command-stderr>\x1b[31mError: no such command\x1b[39m</local-command-stderr>" } }),
    ].join("\n");
    expect(messagesFromTranscript(text).map((m) => m.parts)).toEqual([[{ type: "service", text: "Total cost: $0.01" }], [{ type: "service", text: "Error: no such command" }]]);
  });

  it("reads 2.1's local commands (system entries) as service lines, without escape sequences", () => {
    const text = [
      line({ type: "system", subtype: "local_command", uuid: "s1", content: "<command-name>/context</command-name>\n            <command-message>context</command-message>\n            <command-args></command-args>", isMeta: false }),
      line({ type: "system", subtype: "local_command", uuid: "s2", content: "<local-command-stdout> \x1b[1mContext Usage\x1b[22m\n\x1b[38;2;136;136;136m⛀ \x1b[39m  Opus</local-command-stdout>", isMeta: false }),
      line({ type: "system", subtype: "informational", uuid: "s3", content: "Unknown command: /nosuchcmd", isMeta: false }),
      line({ type: "system", subtype: "turn_duration", uuid: "s4", content: "12 s", isMeta: false }),
    ].join("\n");
    expect(messagesFromTranscript(text).map((m) => [m.id, m.role, m.parts])).toEqual([
      ["s1", "system", [{ type: "service", text: "ran /context" }]],
      ["s2", "system", [{ type: "service", text: "Context Usage\n⛀   Opus" }]],
      ["s3", "system", [{ type: "service", text: "Unknown command: /nosuchcmd" }]],
    ]);
  });
});
