/**
 * Against the real Claude Code (on PATH, or named by WEBMUX_CLAUDE_BIN), with its own login and a
 * network: opt-in with WEBMUX_REAL_AGENT=1, never in CI. It checks what the fake cannot: that the
 * real program still speaks the stream-json control protocol and the hooks webmux relies on.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readSessionInfo } from "../contract/payloads.ts";
import { startTestServer, type TestServer } from "../testing/test-server.ts";
import { waitFor } from "../testing/wait.ts";
import { ChatClient } from "./testing/chat-client.ts";

/** A real model turn and a real TUI start take seconds, sometimes many. */
const REAL_TIMEOUT_MS = 180_000;

describe.skipIf(process.env.WEBMUX_REAL_AGENT !== "1")("hybrid sessions with the real claude", () => {
  let server: TestServer;
  let cwd: string;
  beforeAll(async () => {
    server = await startTestServer();
    cwd = mkdtempSync(join(tmpdir(), "webmux-real-agent-"));
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(cwd, { recursive: true, force: true });
  });

  it(
    "runs a chat turn, moves to the TUI (SessionStart hook) and back with the history read from the transcript",
    async () => {
      const res = await server.api("/api/sessions", { method: "POST", json: { hybrid: { agent: "claude", end: "chat" }, cwd } });
      expect(res.status).toBe(201);
      const info = readSessionInfo(await res.json());
      const chat = await ChatClient.connect(server.url, info.id, { token: server.token, client: "real-agent-1" });
      await chat.until((c) => c.status?.state === "idle", "the chat end started", REAL_TIMEOUT_MS);
      chat.send("real-turn-01", "Reply with exactly one word: PINEAPPLE");
      await chat.until((c) => c.of("turn").some((t) => t.phase === "end"), "the turn ended", REAL_TIMEOUT_MS);
      expect(chat.of("turn").at(-1)).toMatchObject({ status: "success" });
      expect(chat.transcript().join("\n")).toContain("PINEAPPLE");

      expect((await server.api(`/api/sessions/${info.id}/move`, { method: "POST", json: { to: "terminal" } })).status).toBe(200);
      await waitFor(async () => readSessionInfo(await (await server.api(`/api/sessions/${info.id}`)).json()).hybrid?.state === "idle", {
        timeout: REAL_TIMEOUT_MS,
        message: "the TUI reported its start",
      });
      expect((await server.api(`/api/sessions/${info.id}/move`, { method: "POST", json: { to: "chat" } })).status).toBe(200);
      const back = await ChatClient.connect(server.url, info.id, { token: server.token });
      await back.until((c) => c.of("snapshot").length === 1, "snapshot", REAL_TIMEOUT_MS);
      expect(back.transcript().join("\n")).toContain("PINEAPPLE");
    },
    REAL_TIMEOUT_MS * 3,
  );
});
