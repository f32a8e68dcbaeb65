// Runs the hooks of a `--settings` document (a file path or a JSON string) the way Claude Code
// does: each `command` hook through `sh -c`, the event's JSON on stdin, one after another, waited
// for (with the hook's timeout), its output not shown.
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";

/** Claude Code's default hook timeout. */
const DEFAULT_HOOK_TIMEOUT_S = 60;

export function loadSettings(arg) {
  if (arg === undefined) return {};
  const text = existsSync(arg) ? readFileSync(arg, "utf8") : arg;
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`Error: Invalid settings: ${arg} is neither a JSON file nor JSON`);
  }
}

function runCommand(command, payload, timeoutS) {
  return new Promise((resolve) => {
    const child = spawn("sh", ["-c", command], { stdio: ["pipe", "ignore", "ignore"] });
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutS * 1000);
    child.on("error", () => resolve());
    child.on("close", () => {
      clearTimeout(timer);
      resolve();
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(payload));
  });
}

/** Run every hook for `event` (filtered by `matcher`, e.g. the SessionStart source). */
export async function runHooks(settings, event, payload, matchValue) {
  const groups = settings?.hooks?.[event];
  if (!Array.isArray(groups)) return;
  for (const group of groups) {
    if (group.matcher && matchValue !== undefined && !new RegExp(group.matcher).test(matchValue)) continue;
    for (const hook of group.hooks ?? []) {
      if (hook.type === "command" && typeof hook.command === "string") await runCommand(hook.command, payload, hook.timeout ?? DEFAULT_HOOK_TIMEOUT_S);
    }
  }
}

/** The fields every hook payload carries. */
export function hookPayload(conversation, event, fields = {}) {
  return { session_id: conversation.id, transcript_path: conversation.path, cwd: conversation.cwd, permission_mode: "default", hook_event_name: event, ...fields };
}
