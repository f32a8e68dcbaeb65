import { describe, expect, it } from "vitest";
import type { SessionInfo } from "../../../server/contract/types.ts";
import { applySessionEvent } from "./session-feed.ts";

const info = (id: string, createdAt: number, title = id): SessionInfo => ({
  id, title, command: ["bash"], cwd: null, pid: 1, status: "running", exitCode: null, generation: "g.1",
  createdAt, updatedAt: createdAt, cols: 80, rows: 24, controller: null, clients: 0, attention: false, preview: [],
});

describe("applySessionEvent", () => {
  it("orders by creation, whatever order the server sends", () => {
    const list = applySessionEvent([], { type: "snapshot", sessions: [info("bbbbbbbb", 2), info("aaaaaaaa", 1)] });
    expect(list.map((s) => s.id)).toEqual(["aaaaaaaa", "bbbbbbbb"]);
  });

  it("adds, replaces and removes by ID", () => {
    let list = applySessionEvent([], { type: "snapshot", sessions: [info("aaaaaaaa", 1)] });
    list = applySessionEvent(list, { type: "created", session: info("cccccccc", 3) });
    list = applySessionEvent(list, { type: "updated", session: info("aaaaaaaa", 1, "renamed") });
    expect(list.map((s) => [s.id, s.title])).toEqual([["aaaaaaaa", "renamed"], ["cccccccc", "cccccccc"]]);
    list = applySessionEvent(list, { type: "removed", id: "aaaaaaaa" });
    expect(list.map((s) => s.id)).toEqual(["cccccccc"]);
  });

  it("treats a repeated `created` as an update, never a duplicate row", () => {
    let list = applySessionEvent([], { type: "created", session: info("aaaaaaaa", 1) });
    list = applySessionEvent(list, { type: "created", session: info("aaaaaaaa", 1, "again") });
    expect(list).toHaveLength(1);
    expect(list[0]!.title).toBe("again");
  });
});
