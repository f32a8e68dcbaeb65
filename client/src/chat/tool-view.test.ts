import { describe, expect, it } from "vitest";
import { chatSocketUrl } from "./chat-connection.ts";
import { answerQuestions, questionAnswer, readPlan, readQuestions, SUMMARY_CHARS, summarizeTool } from "./tool-view.ts";

describe("summarizeTool", () => {
  it("says what a well-known tool does on one line, cut to fit", () => {
    expect(summarizeTool("Bash", { command: "make\n  && make test", description: "build" })).toBe("make && make test");
    expect(summarizeTool("Edit", { file_path: "src/a.ts", old_string: "x", new_string: "y" })).toBe("src/a.ts");
    expect(summarizeTool("SomeMcpTool", { count: 3, target: "staging" })).toBe("staging");
    expect(summarizeTool("Bash", { command: "x".repeat(200) })).toHaveLength(SUMMARY_CHARS);
    expect(summarizeTool("Nothing", {})).toBe("");
  });
});

describe("AskUserQuestion", () => {
  const input = {
    questions: [
      { question: "Which database?", header: "DB", multiSelect: false, options: [{ label: "Postgres", description: "a server" }, { label: "SQLite" }] },
      { question: "Which extras?", multiSelect: true, options: [{ label: "auth" }, { label: "billing" }] },
    ],
  };

  it("reads its questions and answers them by question text, several labels joined", () => {
    const questions = readQuestions(input)!;
    expect(questions.map((q) => [q.question, q.header, q.multiSelect, q.options.map((o) => o.label)])).toEqual([
      ["Which database?", "DB", false, ["Postgres", "SQLite"]],
      ["Which extras?", "", true, ["auth", "billing"]],
    ]);
    const answered = answerQuestions(input, new Map([["Which database?", "SQLite"], ["Which extras?", "auth, billing"]]));
    expect(answered).toEqual({ ...input, answers: { "Which database?": "SQLite", "Which extras?": "auth, billing" } });
  });

  it("answers with what the user typed: instead of a single choice, beside several; unanswered questions are left out", () => {
    const [single, multi] = readQuestions(input)!;
    expect(questionAnswer(single!, ["SQLite"], "  DuckDB, embedded ")).toBe("DuckDB, embedded");
    expect(questionAnswer(single!, ["SQLite"], " ")).toBe("SQLite");
    expect(questionAnswer(multi!, ["auth"], "audit log")).toBe("auth, audit log");
    expect(questionAnswer(multi!, [], "")).toBe("");
    expect(answerQuestions(input, new Map([["Which database?", "DuckDB"], ["Which extras?", ""]]))).toEqual({ ...input, answers: { "Which database?": "DuckDB" } });
  });

  it("is not mistaken in an input of another shape", () => {
    expect(readQuestions({ questions: "which?" })).toBeNull();
    expect(readQuestions({ questions: [{ question: "q", options: [{ text: "no label" }] }] })).toBeNull();
    expect(readQuestions({})).toBeNull();
  });
});

describe("ExitPlanMode", () => {
  it("reads the plan it proposes", () => {
    expect(readPlan({ plan: "1. a\n2. b" })).toBe("1. a\n2. b");
    expect(readPlan({ plan: 3 })).toBeNull();
    expect(readPlan(null)).toBeNull();
  });
});

describe("chatSocketUrl", () => {
  it("carries client, label, since and compress, over wss on an https page", () => {
    const url = new URL(chatSocketUrl({ sessionId: "abcd1234", clientId: "tab-1" }, "phone", 41, true, "https://host.example/s/abcd1234/chat"));
    expect(`${url.protocol}//${url.host}${url.pathname}`).toBe("wss://host.example/ws/s/abcd1234/chat");
    expect(Object.fromEntries(url.searchParams)).toEqual({ client: "tab-1", label: "phone", since: "41", compress: "1" });
    const first = new URL(chatSocketUrl({ sessionId: "abcd1234", clientId: "tab-1" }, "", null, false, "http://host.example/"));
    expect(first.protocol).toBe("ws:");
    expect(Object.fromEntries(first.searchParams)).toEqual({ client: "tab-1" });
  });
});
