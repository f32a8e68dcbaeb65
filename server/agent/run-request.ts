import { expectObject, optionalBoolean, optionalInt, optionalString, optionalStringRecord, type JsonObject } from "../http/body.ts";
import { invalid } from "../http/errors.ts";
import type { RunRequest } from "./session-runner.ts";

/** A run waits this long unless it asks otherwise (docs/agent-api.md § POST /api/agent/run). */
export const DEFAULT_RUN_TIMEOUT_MS = 300_000;
/** Longest timeout a run may ask for (docs/agent-api.md § POST /api/agent/run). */
export const MAX_RUN_TIMEOUT_MS = 3_600_000;
/** Longest command: a long script fits, and it stays far below the body limit. */
export const MAX_COMMAND_CHARS = 256 * 1024;
/** Longest cwd (PATH_MAX). */
export const MAX_CWD_CHARS = 4096;
/** Longest pane id accepted: session ids are 8 characters; "active"/"auto" 6. */
export const MAX_PANE_ID_CHARS = 64;

/** The command of a run or send: present, non-empty, no NUL (a terminal cannot type it). */
export function requiredCommand(body: JsonObject): string {
  const command = optionalString(body, "command", MAX_COMMAND_CHARS);
  if (command === undefined || command.trim() === "") throw invalid("command is required");
  if (command.includes("\0")) throw invalid("command must not contain NUL characters");
  return command;
}

export function optionalPaneId(body: JsonObject): string | undefined {
  return optionalString(body, "pane_id", MAX_PANE_ID_CHARS);
}

/** A run's fields, from an HTTP body or a /ws/agent `run` frame; 400 naming the bad field. */
export function parseRunRequest(value: unknown): { request: RunRequest; paneId: string | undefined } {
  const body = expectObject(value);
  const command = requiredCommand(body);
  const cwd = optionalString(body, "cwd", MAX_CWD_CHARS);
  if (cwd !== undefined && (cwd === "" || cwd.includes("\0"))) throw invalid("cwd must be a non-empty path without NUL characters");
  const env = optionalStringRecord(body, "env");
  const timeoutMs = optionalInt(body, "timeout", 1, MAX_RUN_TIMEOUT_MS) ?? DEFAULT_RUN_TIMEOUT_MS;
  const stripAnsi = optionalBoolean(body, "strip_ansi") ?? true;
  return {
    request: { command, ...(cwd !== undefined ? { cwd } : {}), ...(env && Object.keys(env).length ? { env } : {}), timeoutMs, stripAnsi },
    paneId: optionalPaneId(body),
  };
}
