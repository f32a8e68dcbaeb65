/**
 * The pinned real agent CLIs, run by the test suite against our mock model APIs on 127.0.0.1, in a
 * scratch HOME whose onboarding and trust dialogs are answered before the agent starts: a test never
 * reads or writes the user's own `~/.claude`, `~/.claude.json` or `~/.codex`.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureAgentCli, type AgentCliName } from "./install-agent-clis.mjs";
import { MockAnthropic } from "./mock-anthropic.ts";
import { MockOpenAI } from "./mock-openai.ts";

/** A dummy key: Claude Code only checks that one is set, and asks once about a new one (pre-answered below). */
const DUMMY_ANTHROPIC_KEY = "sk-ant-webmux-test-00000000000000000000";
/** What Claude Code remembers of an approved key: its last 20 characters. */
const APPROVED_KEY_SUFFIX_CHARS = 20;

/** Where a real CLI is, or why this platform cannot run it (one line, for `describe.skip`). */
export function realAgentCli(name: AgentCliName): { path: string; skip?: undefined } | { path?: undefined; skip: string } {
  return ensureAgentCli(name);
}

/** Environment that keeps a real CLI off the network beyond the mock and away from updates and telemetry. */
const QUIET_ENV = {
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  DISABLE_AUTOUPDATER: "1",
  DISABLE_TELEMETRY: "1",
  DISABLE_ERROR_REPORTING: "1",
  NO_UPDATE_NOTIFIER: "1",
};

export type RealAgentScratch = {
  root: string;
  /** the project directory the session runs in (not a git repository) */
  cwd: string;
  home: string;
  /** the session's `env` for POST /api/sessions */
  env: Record<string, string>;
  stop(): Promise<void>;
};

function scratch(prefix: string): { root: string; cwd: string; home: string } {
  const root = mkdtempSync(join(tmpdir(), prefix));
  const cwd = join(root, "project");
  const home = join(root, "home");
  mkdirSync(cwd, { recursive: true });
  mkdirSync(home, { recursive: true });
  return { root, cwd, home };
}

export type RealClaude = RealAgentScratch & { mock: MockAnthropic; configDir: string };

/** The real claude in a scratch HOME, talking to a fresh MockAnthropic; script the mock before the first turn. */
export async function startRealClaude(bin: string): Promise<RealClaude> {
  const { root, cwd, home } = scratch("webmux-real-claude-");
  const configDir = join(home, ".claude");
  mkdirSync(configDir, { recursive: true });
  // The first-run dialogs (theme, API key, "trust this folder"), answered as a user would once.
  const state = {
    hasCompletedOnboarding: true,
    lastOnboardingVersion: "2.1.197",
    theme: "dark",
    customApiKeyResponses: { approved: [DUMMY_ANTHROPIC_KEY.slice(-APPROVED_KEY_SUFFIX_CHARS)], rejected: [] },
    projects: { [cwd]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true, projectOnboardingSeenCount: 1, allowedTools: [] } },
  };
  writeFileSync(join(configDir, ".claude.json"), JSON.stringify(state, null, 2));
  const mock = new MockAnthropic();
  await mock.start();
  const env = {
    ...QUIET_ENV,
    HOME: home,
    CLAUDE_CONFIG_DIR: configDir,
    WEBMUX_CLAUDE_BIN: bin,
    ANTHROPIC_BASE_URL: mock.url,
    ANTHROPIC_API_KEY: DUMMY_ANTHROPIC_KEY,
  };
  return {
    root,
    cwd,
    home,
    configDir,
    mock,
    env,
    async stop() {
      await mock.stop();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

export type RealCodex = RealAgentScratch & { mock: MockOpenAI; codexHome: string };

/** The real codex in a scratch HOME and CODEX_HOME whose only model provider is a fresh MockOpenAI. */
export async function startRealCodex(bin: string): Promise<RealCodex> {
  const { root, cwd, home } = scratch("webmux-real-codex-");
  const codexHome = join(home, ".codex");
  mkdirSync(codexHome, { recursive: true });
  const mock = new MockOpenAI();
  await mock.start();
  // The TUI's first-run questions: trust this folder, the screen-reader probe, the model nudge.
  const extra = [`[projects."${cwd}"]`, `trust_level = "trusted"`, ``, `[tui]`, `screen_reader_detection_done = true`, ``].join("\n");
  writeFileSync(join(codexHome, "config.toml"), mock.configToml(extra));
  const env = { ...QUIET_ENV, HOME: home, CODEX_HOME: codexHome, WEBMUX_CODEX_BIN: bin };
  return {
    root,
    cwd,
    home,
    codexHome,
    mock,
    env,
    async stop() {
      await mock.stop();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
