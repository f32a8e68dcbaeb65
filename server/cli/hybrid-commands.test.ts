/**
 * The CLI's hybrid-session commands end to end: `webmux new --agent`, `ls`, `move` and `attach`
 * (`--take` too) as real processes against a real server whose sessions run the scripted fake
 * Claude (server/testing/agents/fake), named through the server's environment.
 */
import { execFile } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { CloseCode } from "../contract/protocol.ts";
import type { SessionInfo } from "../contract/types.ts";
import { FAKE_CLAUDE, startHybridFixture, type HybridFixture } from "../testing/hybrid-fixture.ts";
import { TerminalClient } from "../testing/terminal-client.ts";
import { TEST_SHELL_COMMAND } from "../testing/test-server.ts";
import { waitFor } from "../testing/wait.ts";
import { EXIT_BUSY } from "./hybrid-move.ts";
import { OuterTerminal } from "./outer-terminal.ts";

const FAKE_CODEX = fileURLToPath(new URL("../testing/agents/fake/fake-codex.mjs", import.meta.url));
const WEBMUX_BIN = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "bin", "webmux.js");
/** What the fake TUI draws when it waits for a prompt. */
const TUI_PROMPT = "\x1b[1m>\x1b[0m ";
const SHELL_PROMPT = /[$#] $/;

type CliResult = { code: number; stdout: string; stderr: string };

let fx: HybridFixture;
let env: Record<string, string>;
const savedEnv = new Map<string, string | undefined>();
const outers: OuterTerminal[] = [];
const clients: TerminalClient[] = [];

/** `webmux …` from a script (no terminal), with only the given WEBMUX_* variables. */
function runCli(args: string[]): Promise<CliResult> {
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("WEBMUX_") && k !== "XDG_STATE_HOME") base[k] = v;
  return new Promise((resolve) => {
    execFile(process.execPath, [WEBMUX_BIN, ...args], { env: { ...base, ...env } }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

function outer(args: string[], options?: ConstructorParameters<typeof OuterTerminal>[2]): OuterTerminal {
  const t = new OuterTerminal(args, env, options);
  outers.push(t);
  return t;
}

async function terminal(id: string, client?: string): Promise<TerminalClient> {
  const c = await TerminalClient.connect(fx.server.url, id, { token: fx.server.token, ...(client ? { client } : {}) });
  clients.push(c);
  return c;
}

/** `webmux new --agent claude …` in the fixture's project dir; the new session's id. */
async function newAgentSession(...flags: string[]): Promise<string> {
  const created = await runCli(["new", "--agent", "claude", "--cwd", fx.cwd, ...flags]);
  expect(created.code, created.stderr).toBe(0);
  const id = created.stdout.trim();
  expect(id).toMatch(/^[a-z0-9]{8}$/);
  return id;
}

beforeAll(async () => {
  fx = await startHybridFixture();
  env = { WEBMUX_URL: fx.server.url, WEBMUX_TOKEN: fx.server.token };
  // The CLI cannot pass an environment: the server's own (this process's) names the fake agent.
  const agentEnv = {
    WEBMUX_CLAUDE_BIN: FAKE_CLAUDE,
    CLAUDE_CONFIG_DIR: fx.configDir,
    FAKE_CLAUDE_PID_LOG: fx.pidLog,
    FAKE_CLAUDE_DELTA_MS: "5",
    WEBMUX_CODEX_BIN: FAKE_CODEX,
    CODEX_HOME: join(dirname(fx.configDir), "codex-home"),
  };
  for (const [k, v] of Object.entries(agentEnv)) {
    savedEnv.set(k, process.env[k]);
    process.env[k] = v;
  }
});

afterEach(async () => {
  for (const t of outers.splice(0)) t.kill();
  for (const c of clients.splice(0)) await c.close();
});

afterAll(async () => {
  for (const [k, v] of savedEnv) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  await fx.stop();
});

describe("webmux new --agent / ls", () => {
  it("creates a hybrid session running the agent's TUI, and ls shows its agent, end and state", async () => {
    const id = await newAgentSession("--title", "pair");
    const info = await fx.info(id);
    expect(info.title).toBe("pair");
    expect(info.hybrid).toMatchObject({ agent: "claude", end: "terminal" });
    await fx.waitForHybrid(id, (h) => h.state === "idle", "the TUI started");
    const term = await terminal(id);
    await term.waitForText(TUI_PROMPT);

    const parked = await newAgentSession("--end", "chat", "--conversation", "5f0c2a8e-3b1d-4c7e-9a6f-2d8b1e4c7a90");
    expect(await fx.hybrid(parked)).toMatchObject({ agent: "claude", end: "chat", state: "parked", conversationId: "5f0c2a8e-3b1d-4c7e-9a6f-2d8b1e4c7a90" });
    const plain = await fx.server.createSession({ command: TEST_SHELL_COMMAND, title: "plain" });

    const table = await runCli(["ls"]);
    expect(table.code, table.stderr).toBe(0);
    const lines = table.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^ID\s+STATUS\s+CLIENTS\s+SIZE\s+AGE\s+AGENT\s+TITLE$/);
    expect(lines.find((l) => l.startsWith(id))).toMatch(new RegExp(`^${id}\\s+idle\\s+1\\s+.*\\sclaude@terminal\\s+pair$`));
    expect(lines.find((l) => l.startsWith(parked))).toMatch(new RegExp(`^${parked}\\s+parked\\s+0\\s+.*\\sclaude@chat\\s`));
    expect(lines.find((l) => l.startsWith(plain.id))).toMatch(new RegExp(`^${plain.id}\\s+running\\s+.*\\s-\\s+plain$`));

    // --json stays the server's SessionInfo
    const json = await runCli(["ls", "--json"]);
    const listed = (JSON.parse(json.stdout) as SessionInfo[]).find((s) => s.id === parked)!;
    expect(listed.hybrid).toEqual((await fx.info(parked)).hybrid);
  });

  it("creates a Codex hybrid session too", async () => {
    const created = await runCli(["new", "--agent", "codex", "--end", "chat", "--cwd", fx.cwd]);
    expect(created.code, created.stderr).toBe(0);
    const id = created.stdout.trim();
    expect(await fx.hybrid(id)).toMatchObject({ agent: "codex", end: "chat", state: "parked" });
    const table = await runCli(["ls"]);
    expect(table.stdout.split("\n").find((l) => l.startsWith(id))).toMatch(/\sparked\s.*\scodex@chat\s/);
  });

  it("prints the server's refusal of an unknown agent and exits 1; flags that need --agent are usage errors", async () => {
    const unknown = await runCli(["new", "--agent", "gpt-9000", "--cwd", fx.cwd]);
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toBe("");
    expect(unknown.stderr).toMatch(/^webmux new: unknown agent gpt-9000 \(known: claude[^)]*\)\n$/);
    const orphan = await runCli(["new", "--conversation", "abc"]);
    expect(orphan.code).toBe(2);
    expect(orphan.stderr).toContain("--conversation and --end need --agent");
    const withCommand = await runCli(["new", "--agent", "claude", "--", "bash"]);
    expect(withCommand.code).toBe(2);
    expect(withCommand.stderr).toContain("leave out the command");
  });
});

describe("webmux move", () => {
  it("moves to the chat end and back to the terminal, printing where the conversation is", async () => {
    const id = await newAgentSession();
    await fx.waitForHybrid(id, (h) => h.state === "idle", "the TUI started");
    const term = await terminal(id);
    await term.waitForText(TUI_PROMPT);

    const toChat = await runCli(["move", id, "chat"]);
    expect(toChat.code, toChat.stderr).toBe(0);
    expect(toChat.stdout).toBe(`${id} is at the chat end (parked)\n`);
    expect(await term.closed()).toBe(CloseCode.MOVED);
    expect(await fx.hybrid(id)).toMatchObject({ end: "chat", state: "parked" });

    const toTerminal = await runCli(["move", id, "terminal"]);
    expect(toTerminal.code, toTerminal.stderr).toBe(0);
    expect(toTerminal.stdout).toMatch(new RegExp(`^${id} is at the terminal end \\((starting|idle)\\)\\n$`));
    expect((await fx.info(id)).status).toBe("running");
    const again = await terminal(id);
    await again.waitForText(TUI_PROMPT);
  });

  it("refuses while the agent is busy with its own exit status and a hint, and moves with --interrupt", async () => {
    const id = await newAgentSession();
    const term = await terminal(id);
    await term.waitForText(TUI_PROMPT);
    term.type("slow 60\r");
    await fx.waitForHybrid(id, (h) => h.state === "busy", "busy from UserPromptSubmit");

    const refused = await runCli(["move", id, "chat"]);
    expect(refused.code).toBe(EXIT_BUSY);
    expect(EXIT_BUSY).toBe(3);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toContain(`webmux move: session ${id} was not moved: the agent is busy. Pass --interrupt`);
    expect(refused.stderr).toContain(`webmux move --url ${fx.server.url} ${id} chat --interrupt`);
    expect(await fx.hybrid(id)).toMatchObject({ end: "terminal", state: "busy" });
    expect(term.closeCode).toBeNull();

    const moved = await runCli(["move", id, "chat", "--interrupt"]);
    expect(moved.code, moved.stderr).toBe(0);
    expect(moved.stdout).toBe(`${id} is at the chat end (parked)\n`);
    expect(await term.closed()).toBe(CloseCode.MOVED);
  });

  it("says a plain session cannot move, and checks its arguments", async () => {
    const plain = await fx.server.createSession({ command: TEST_SHELL_COMMAND });
    const notHybrid = await runCli(["move", plain.id, "chat"]);
    expect(notHybrid.code).toBe(1);
    expect(notHybrid.stderr).toContain(`session ${plain.id} is not a hybrid session`);
    expect((await runCli(["move", plain.id, "sideways"])).code).toBe(2);
    expect((await runCli(["move", plain.id, "chat", "--attach"])).code).toBe(2);
  });

  it("move --attach brings the conversation to the terminal and attaches this terminal to its TUI", async () => {
    const id = await newAgentSession("--end", "chat");
    const t = outer(["move", id, "terminal", "--attach"]);
    await t.waitForOutput(TUI_PROMPT);
    expect((await fx.hybrid(id)).end).toBe("terminal");
    t.type("\x1c");
    expect(await t.exitCode()).toBe(0);
    expect(t.output).toContain(`detached from ${id}; it keeps running`);
  });
});

describe("webmux attach and hybrid sessions", () => {
  it("exits 0 from a session parked at the chat end, saying where it went and how to bring it back; attaching does not move it", async () => {
    const id = await newAgentSession("--end", "chat");
    const t = outer(["attach", id]);
    expect(await t.exitCode()).toBe(0);
    expect(t.output).toContain(`detached: session ${id} moved to its chat end; continue it in the browser, or bring it back here with:`);
    expect(t.output).toContain(`webmux move --url ${fx.server.url} ${id} terminal --attach`);
    expect(await fx.hybrid(id)).toMatchObject({ end: "chat", state: "parked" });
  });

  it("attach --take takes control from the controlling client at once, and the PTY takes this terminal's size", async () => {
    const s = await fx.server.createSession({ command: TEST_SHELL_COMMAND, cols: 80, rows: 24 });
    const other = await terminal(s.id, "other-device");
    other.type("\r");
    await waitFor(() => fx.server.registry.get(s.id)!.info().controller?.clientId === "other-device", { message: "the other client controls" });

    const t = outer(["attach", "--take", s.id], { cols: 100, rows: 30 });
    // without a keystroke from the CLI: the other client is told control moved, at the CLI's size
    const taken = await waitFor(
      () => other.frames.find((f) => f.type === "control" && f.control.controller?.clientId.startsWith("cli-") && f.control.cols === 100 && f.control.rows === 30),
      { message: "a control frame naming the CLI at 100x30" },
    );
    expect(taken).toBeDefined();
    expect(fx.server.registry.get(s.id)!.info()).toMatchObject({ cols: 100, rows: 30 });
    await t.waitForOutput(SHELL_PROMPT);
    const mark = t.output.length;
    t.type("stty size\r");
    await t.waitForOutput("30 100\r", { from: mark });
  });

  it("attach --take on a session at the chat end moves its conversation here and attaches in control", async () => {
    const id = await newAgentSession("--end", "chat");
    const t = outer(["attach", "--take", id], { cols: 90, rows: 28 });
    await t.waitForOutput(TUI_PROMPT);
    const info = await fx.info(id);
    expect(info.hybrid!.end).toBe("terminal");
    expect(info.controller?.clientId).toMatch(/^cli-/);
    expect(info).toMatchObject({ cols: 90, rows: 28 });
    t.type("\x1c");
    expect(await t.exitCode()).toBe(0);
  });
});
