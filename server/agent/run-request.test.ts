import { describe, expect, it } from "vitest";
import { ApiError } from "../http/errors.ts";
import { DEFAULT_RUN_TIMEOUT_MS, MAX_RUN_TIMEOUT_MS, parseRunRequest } from "./run-request.ts";

function refusal(body: unknown): ApiError {
  try {
    parseRunRequest(body);
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error(`accepted: ${JSON.stringify(body)}`);
}

describe("parseRunRequest", () => {
  it("has the documented defaults: timeout 300000 ms, strip_ansi true, pane auto, no cwd or env", () => {
    expect(DEFAULT_RUN_TIMEOUT_MS).toBe(300_000);
    expect(parseRunRequest({ command: "ls -la" })).toEqual({ request: { command: "ls -la", timeoutMs: 300_000, stripAnsi: true }, paneId: undefined });
  });

  it("takes every field of the documented request", () => {
    const parsed = parseRunRequest({ command: "ls", cwd: "/tmp", env: { KEY: "val" }, timeout: 30_000, pane_id: "abc12345", strip_ansi: false });
    expect(parsed).toEqual({ request: { command: "ls", cwd: "/tmp", env: { KEY: "val" }, timeoutMs: 30_000, stripAnsi: false }, paneId: "abc12345" });
  });

  it("accepts a timeout up to 3600000 ms and refuses anything else with 400 INVALID_REQUEST", () => {
    expect(MAX_RUN_TIMEOUT_MS).toBe(3_600_000);
    expect(parseRunRequest({ command: "true", timeout: 3_600_000 }).request.timeoutMs).toBe(3_600_000);
    for (const bad of [
      { command: "true", timeout: 3_600_001 },
      { command: "true", timeout: 0 },
      { command: "true", timeout: "30000" },
      { command: "" },
      { command: "   " },
      { cwd: "/tmp" },
      { command: "a\0b" },
      { command: "true", cwd: "" },
      { command: "true", env: { "X; rm -rf ~": "v" } },
      { command: "true", env: { X: 1 } },
      { command: "true", strip_ansi: "yes" },
      [],
      "ls",
    ]) {
      const err = refusal(bad);
      expect([err.status, err.code], JSON.stringify(bad)).toEqual([400, "INVALID_REQUEST"]);
    }
  });
});
