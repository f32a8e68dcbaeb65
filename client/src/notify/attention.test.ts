import { describe, expect, it } from "vitest";
import type { SessionInfo } from "../../../server/contract/types.ts";
import { attentionMessage, isSessionPath, sessionPath, stepAttention } from "./attention.ts";

const info = (id: string, attention: boolean, extra: Partial<SessionInfo> = {}): SessionInfo => ({
  id, title: id, command: ["bash"], cwd: null, pid: 1, status: "running", exitCode: null, generation: "g.1",
  createdAt: 1, updatedAt: 1, cols: 80, rows: 24, controller: null, clients: 0, attention, preview: [], ...extra,
});

describe("stepAttention", () => {
  it("rings nothing for the first list, even for sessions already asking", () => {
    const step = stepAttention(null, [info("aaaaaaaa", true), info("bbbbbbbb", false)]);
    expect(step.rang).toEqual([]);
    expect(step.count).toBe(1);
  });

  it("rings a session whose attention turns on, once", () => {
    let step = stepAttention(null, [info("aaaaaaaa", false)]);
    step = stepAttention(step.seen, [info("aaaaaaaa", true)]);
    expect(step.rang.map((s) => s.id)).toEqual(["aaaaaaaa"]);
    expect(step.count).toBe(1);
    step = stepAttention(step.seen, [info("aaaaaaaa", true, { preview: ["changed"] })]);
    expect(step.rang).toEqual([]);
  });

  it("rings a session created with attention on after the first list", () => {
    const first = stepAttention(null, []);
    expect(stepAttention(first.seen, [info("cccccccc", true)]).rang.map((s) => s.id)).toEqual(["cccccccc"]);
  });

  it("reports sessions that went quiet or away, and counts what is left", () => {
    let step = stepAttention(null, [info("aaaaaaaa", false), info("bbbbbbbb", false)]);
    step = stepAttention(step.seen, [info("aaaaaaaa", true), info("bbbbbbbb", true)]);
    expect(step.count).toBe(2);
    step = stepAttention(step.seen, [info("aaaaaaaa", false)]);
    expect(step.quieted.sort()).toEqual(["aaaaaaaa", "bbbbbbbb"]);
    expect(step.count).toBe(0);
  });
});

describe("attentionMessage", () => {
  it("names the session and shows its last non-empty preview line", () => {
    expect(attentionMessage(info("aaaaaaaa", true, { title: "build", preview: ["make: done", "$ ", " "] }))).toEqual({
      title: "build",
      body: "Needs attention: $",
    });
  });

  it("falls back on the command when the title is blank", () => {
    expect(attentionMessage(info("aaaaaaaa", true, { title: " ", command: ["npm", "test"] })).title).toBe("npm test");
  });
});

describe("sessionPath", () => {
  it("leads to the terminal, or to the chat while a hybrid session is at its chat end", () => {
    expect(sessionPath({ id: "abcd1234" })).toBe("/s/abcd1234");
    const hybrid = { agent: "claude", conversationId: "c", previousConversationIds: [], state: "idle" as const };
    expect(sessionPath({ id: "abcd1234", hybrid: { ...hybrid, end: "terminal" } })).toBe("/s/abcd1234");
    expect(sessionPath({ id: "abcd1234", hybrid: { ...hybrid, end: "chat" } })).toBe("/s/abcd1234/chat");
  });

  it("accepts only the paths it gives", () => {
    expect(isSessionPath("/s/abcd1234")).toBe(true);
    expect(isSessionPath("/s/abcd1234/chat")).toBe(true);
    for (const path of ["/s/ABCD1234", "/s/abcd1234/other", "/s/../api/tokens", "/settings", "https://x.test/s/abcd1234"]) expect(isSessionPath(path)).toBe(false);
  });
});
