#!/usr/bin/env node
// Installs the pinned real agent CLIs the hybrid tests drive (against mock model APIs), once, into
// a cache outside node_modules: `<cache>/<name>-<version>/node_modules/.bin/<bin>`, where the
// cache is $WEBMUX_AGENT_CLIS_CACHE or ~/.cache/webmux-agent-clis. They are npm packages with
// native binaries (~660 MB together), so `npm install && npm start` stays lean without them.
// `node install-agent-clis.mjs [claude|codex]…` installs what is missing and prints where;
// the tests call `ensureAgentCli` for the same.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The versions the tests were written against; a new version is a deliberate change here. */
export const AGENT_CLIS = {
  claude: { package: "@anthropic-ai/claude-code", version: "2.1.197", bin: "claude" },
  codex: { package: "@openai/codex", version: "0.171.0", bin: "codex" },
};

export function agentClisCache(env = process.env) {
  return env.WEBMUX_AGENT_CLIS_CACHE || join(env.HOME || homedir(), ".cache", "webmux-agent-clis");
}

function prefixOf(name, env) {
  const cli = AGENT_CLIS[name];
  return join(agentClisCache(env), `${name}-${cli.version}`);
}

export function agentCliPath(name, env = process.env) {
  return join(prefixOf(name, env), "node_modules", ".bin", AGENT_CLIS[name].bin);
}

/** `<bin> --version` works: the package's native binary runs on this platform. */
function runs(path) {
  const result = spawnSync(path, ["--version"], { encoding: "utf8", timeout: 60_000 });
  return result.status === 0 ? null : (result.error?.message ?? (result.stderr || result.stdout || `exit ${result.status}`).trim().split("\n")[0]);
}

/**
 * Install `name` unless it is there; returns `{path}` when it runs here, `{skip}` with a one-line
 * reason when its binary cannot run on this platform. A failed download throws: that is a broken
 * machine or network, not a reason to skip.
 */
export function ensureAgentCli(name, env = process.env) {
  const cli = AGENT_CLIS[name];
  const prefix = prefixOf(name, env);
  const path = agentCliPath(name, env);
  if (!existsSync(path)) {
    // Into a private directory first, renamed when complete: parallel test files never see half an install.
    const partial = `${prefix}.partial-${process.pid}`;
    rmSync(partial, { recursive: true, force: true });
    mkdirSync(partial, { recursive: true });
    const npm = process.platform === "win32" ? "npm.cmd" : "npm";
    const result = spawnSync(npm, ["install", "--no-audit", "--no-fund", "--no-save", "--prefix", partial, `${cli.package}@${cli.version}`], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      timeout: 15 * 60_000,
    });
    if (result.status !== 0) {
      rmSync(partial, { recursive: true, force: true });
      throw new Error(`npm install ${cli.package}@${cli.version} failed: ${(result.stderr || result.error?.message || "").trim().slice(-2000)}`);
    }
    if (!existsSync(join(partial, "node_modules", ".bin", cli.bin))) {
      rmSync(partial, { recursive: true, force: true });
      return { skip: `${cli.package}@${cli.version} has no ${cli.bin} for ${process.platform}-${process.arch}` };
    }
    try {
      renameSync(partial, prefix);
    } catch {
      rmSync(partial, { recursive: true, force: true }); // another process finished first
    }
  }
  let problem = runs(path);
  if (problem !== null && name === "claude") {
    // Its postinstall puts the platform's binary in place; run it again if a policy skipped it.
    spawnSync(process.execPath, [join(prefix, "node_modules", cli.package, "install.cjs")], { cwd: join(prefix, "node_modules", cli.package), stdio: "ignore" });
    problem = runs(path);
  }
  if (problem !== null) return { skip: `${cli.package}@${cli.version} cannot run on ${process.platform}-${process.arch}: ${problem}` };
  return { path };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const names = process.argv.slice(2).length > 0 ? process.argv.slice(2) : Object.keys(AGENT_CLIS);
  let failed = false;
  for (const name of names) {
    if (!AGENT_CLIS[name]) {
      console.error(`unknown agent CLI ${name} (known: ${Object.keys(AGENT_CLIS).join(", ")})`);
      process.exit(2);
    }
    const started = Date.now();
    try {
      const result = ensureAgentCli(name);
      const took = ((Date.now() - started) / 1000).toFixed(1);
      console.log("path" in result ? `${name} ${AGENT_CLIS[name].version}: ${result.path} (${took} s)` : `${name}: skipped: ${result.skip}`);
    } catch (err) {
      console.error(`${name}: ${err.message}`);
      failed = true;
    }
  }
  process.exit(failed ? 1 : 0);
}
