import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { messagesFromTranscript, transcriptPath } from "../../../hybrid/adapters/claude-transcript.ts";
import { FAKE_CLAUDE } from "../../hybrid-fixture.ts";

const CONVERSATION = "3f1b0c9e-1111-4222-8333-444455556666";
let root: string;
let cwd: string;
let env: Record<string, string>;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "fake-claude-"));
  cwd = join(root, "my project");
  mkdirSync(cwd);
  env = { ...(process.env as Record<string, string>), CLAUDE_CONFIG_DIR: join(root, "config"), FAKE_CLAUDE_DELTA_MS: "0" };
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function run(args: string[], extraEnv: Record<string, string> = {}) {
  return spawnSync(FAKE_CLAUDE, args, { cwd, env: { ...env, ...extraEnv }, encoding: "utf8" });
}

/** A headless fake speaking stream-json: write lines, read events. */
function headless(args: string[], extraEnv: Record<string, string> = {}) {
  const child = spawn(FAKE_CLAUDE, ["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose", "--include-partial-messages", ...args], {
    cwd,
    env: { ...env, ...extraEnv },
    stdio: ["pipe", "pipe", "inherit"],
  });
  const events: Record<string, any>[] = [];
  const waiters: (() => void)[] = [];
  createInterface({ input: child.stdout }).on("line", (line) => {
    events.push(JSON.parse(line));
    for (const w of waiters.splice(0)) w();
  });
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  return {
    events,
    exited,
    write: (obj: unknown) => child.stdin.write(`${JSON.stringify(obj)}\n`),
    end: () => child.stdin.end(),
    async until(predicate: (events: Record<string, any>[]) => boolean): Promise<void> {
      while (!predicate(events)) {
        const exitedFirst = await Promise.race([new Promise<false>((r) => waiters.push(() => r(false))), exited.then(() => true)]);
        if (exitedFirst && !predicate(events)) throw new Error(`the fake exited; events: ${JSON.stringify(events.map((e) => e.type))}`);
      }
    },
  };
}

const user = (text: string, uuid?: string) => ({ type: "user", message: { role: "user", content: [{ type: "text", text }] }, parent_tool_use_id: null, ...(uuid ? { uuid } : {}) });

describe("the fake claude's command-line contract", () => {
  it("refuses what the real program refuses", () => {
    const unknown = run(["--no-such-flag"]);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toContain("unknown option '--no-such-flag'");
    const noVerbose = run(["-p", "--output-format", "stream-json", "hi"]);
    expect(noVerbose.status).toBe(1);
    expect(noVerbose.stderr).toContain("--output-format=stream-json requires --verbose");
    const both = run(["--session-id", CONVERSATION, "--resume", CONVERSATION]);
    expect(both.status).toBe(1);
    expect(both.stderr).toContain("--session-id can only be used with --continue or --resume if --fork-session is also specified");
    const missing = run(["-p", "--resume", CONVERSATION, "hi"]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain(`No conversation found with session ID: ${CONVERSATION}`);
    expect(run(["--session-id", "not-a-uuid"]).stderr).toContain("Invalid session ID");
  });

  it("writes a real-shaped transcript where webmux looks for it, and resumes it", () => {
    expect(run(["-p", "--session-id", CONVERSATION, "say hello there"]).stdout).toBe("hello there\n");
    expect(run(["-p", "--resume", CONVERSATION, "say again"]).stdout).toBe("again\n");
    expect(run(["-p", "--session-id", CONVERSATION, "hi"]).stderr).toContain(`Session ID ${CONVERSATION} is already in use`);
    const text = readFileSync(transcriptPath(env, cwd, CONVERSATION), "utf8");
    const lines = text.trim().split("\n").map((l) => JSON.parse(l));
    expect(lines.map((l) => l.type)).toEqual(["file-history-snapshot", "user", "assistant", "file-history-snapshot", "user", "assistant"]);
    expect(lines[1]).toMatchObject({ sessionId: CONVERSATION, cwd, isSidechain: false, message: { role: "user", content: "say hello there" }, parentUuid: null });
    expect(lines[2]).toMatchObject({ parentUuid: lines[1].uuid, message: { role: "assistant", content: [{ type: "text", text: "hello there" }] } });
    expect(messagesFromTranscript(text).map((m) => [m.role, m.parts])).toEqual([
      ["user", [{ type: "text", text: "say hello there" }]],
      ["assistant", [{ type: "text", text: "hello there" }]],
      ["user", [{ type: "text", text: "say again" }]],
      ["assistant", [{ type: "text", text: "again" }]],
    ]);
  });

  it("runs --settings hooks with the real payloads", () => {
    const log = join(root, "hooks.log");
    const settings = join(root, "settings.json");
    const command = `cat >> '${log}'; echo >> '${log}'`;
    const hook = [{ hooks: [{ type: "command", command }] }];
    writeFileSync(settings, JSON.stringify({ hooks: { SessionStart: hook, UserPromptSubmit: hook, Stop: hook } }));
    run(["-p", "--session-id", CONVERSATION, "--settings", settings, "say hooked"]);
    const payloads = readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    const common = { session_id: CONVERSATION, transcript_path: transcriptPath(env, cwd, CONVERSATION), cwd };
    expect(payloads).toEqual([
      { ...common, permission_mode: "default", hook_event_name: "SessionStart", source: "startup" },
      { ...common, permission_mode: "default", hook_event_name: "UserPromptSubmit", prompt: "say hooked" },
      { ...common, permission_mode: "default", hook_event_name: "Stop", stop_hook_active: false },
    ]);
  });
});

describe("the fake claude's stream-json mode", () => {
  it("answers initialize, then per turn: system/init, deltas, assistant, can_use_tool until answered, result", async () => {
    const agent = headless(["--permission-prompt-tool", "stdio", "--session-id", CONVERSATION]);
    agent.write({ type: "control_request", request_id: "init-1", request: { subtype: "initialize", hooks: null } });
    await agent.until((e) => e.some((x) => x.type === "control_response"));
    expect(agent.events[0]).toMatchObject({ type: "control_response", response: { subtype: "success", request_id: "init-1" } });
    agent.write(user('say hi; tool Bash {"command":"ls"}', "my-uuid-1"));
    await agent.until((e) => e.some((x) => x.type === "control_request"));
    const request = agent.events.find((x) => x.type === "control_request")!;
    expect(request.request).toMatchObject({ subtype: "can_use_tool", tool_name: "Bash", input: { command: "ls" } });
    expect(agent.events.some((x) => x.type === "result")).toBe(false);
    agent.write({ type: "control_response", response: { subtype: "success", request_id: request.request_id, response: { behavior: "allow", updatedInput: { command: "ls -l" } } } });
    await agent.until((e) => e.some((x) => x.type === "result"));
    agent.end();
    expect(await agent.exited).toBe(0);
    const types = agent.events.map((x) => (x.type === "stream_event" ? `stream:${x.event.type}` : x.type === "system" ? `system:${x.subtype}` : x.type));
    // The real 2.1.197's order: a status before each API request, a block's assistant message before its content_block_stop.
    expect(types.slice(1, 9)).toEqual(["system:init", "system:status", "stream:message_start", "stream:content_block_start", "stream:content_block_delta", "assistant", "stream:content_block_stop", "stream:message_delta"]);
    expect(agent.events.find((x) => x.type === "system")).toMatchObject({ session_id: CONVERSATION, cwd });
    const toolResult = agent.events.find((x) => x.type === "user")!;
    expect(toolResult.message.content[0]).toMatchObject({ type: "tool_result", content: 'ran Bash {"command":"ls -l"}', is_error: false });
    expect(agent.events.at(-1)).toMatchObject({ type: "result", subtype: "success", is_error: false, session_id: CONVERSATION });
    expect(readFileSync(transcriptPath(env, cwd, CONVERSATION), "utf8")).toContain('"uuid":"my-uuid-1"');
  });

  it("refuses tools without asking when its permission events are off, and stops a turn on interrupt", async () => {
    const quiet = headless(["--permission-prompt-tool", "stdio", "--session-id", CONVERSATION], { FAKE_CLAUDE_NO_PERMISSION_EVENTS: "1" });
    quiet.write(user("tool Bash {}"));
    await quiet.until((e) => e.some((x) => x.type === "result"));
    expect(quiet.events.some((x) => x.type === "control_request")).toBe(false);
    expect(quiet.events.find((x) => x.type === "user")!.message.content[0]).toMatchObject({ is_error: true, content: expect.stringContaining("haven't granted it yet") });
    quiet.write(user("slow 30"));
    await quiet.until((e) => e.filter((x) => x.type === "stream_event" && x.event.type === "content_block_delta").length > 2);
    quiet.write({ type: "control_request", request_id: "stop-1", request: { subtype: "interrupt" } });
    await quiet.until((e) => e.filter((x) => x.type === "result").length === 2);
    expect(quiet.events.at(-1)).toMatchObject({ type: "result", is_error: true, subtype: "error_during_execution" });
    quiet.end();
    expect(await quiet.exited).toBe(0);
  });

  it("mints a new conversation id on resume when asked to, with the history copied", async () => {
    run(["-p", "--session-id", CONVERSATION, "say first"]);
    const agent = headless(["--resume", CONVERSATION], { FAKE_CLAUDE_NEW_ID_ON_RESUME: "1" });
    agent.write(user("say second"));
    await agent.until((e) => e.some((x) => x.type === "result"));
    agent.end();
    const init = agent.events.find((x) => x.type === "system")!;
    expect(init.session_id).not.toBe(CONVERSATION);
    const copied = messagesFromTranscript(readFileSync(transcriptPath(env, cwd, init.session_id), "utf8"));
    expect(copied.map((m) => (m.parts[0] as { text: string }).text)).toEqual(["say first", "first", "say second", "second"]);
  });
});
