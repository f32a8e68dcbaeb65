import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AgentTokenStore } from "./tokens.ts";

const dirs: string[] = [];
function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "webmux-tokens-"));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("AgentTokenStore", () => {
  it("resolves a token to its capabilities until it expires", () => {
    let now = 1_000_000;
    const store = new AgentTokenStore(dataDir(), () => now);
    const { token, info } = store.create("ci", ["terminal:read"], 60);
    expect(info.expires_at).toBe(now + 60_000);
    const principal = store.resolve(token);
    expect(principal).toMatchObject({ kind: "agent", id: info.id });
    expect([...principal!.capabilities]).toEqual(["terminal:read"]);
    expect(store.list()[0]!.last_used_at).toBe(now);
    now += 60_000;
    expect(store.resolve(token)).toBeNull();
    expect(store.lookup(info.id)).toBeNull();
  });

  it("refuses tokens it never issued, malformed ones and revoked ones", () => {
    const store = new AgentTokenStore(dataDir());
    const { token, info } = store.create("agent", ["terminal:read", "terminal:write"], null);
    expect(store.resolve(token.slice(0, -1) + (token.endsWith("0") ? "1" : "0"))).toBeNull();
    expect(store.resolve(token.toUpperCase())).toBeNull();
    expect(store.resolve("dnt_" + "0".repeat(64))).toBeNull();
    expect(store.revoke(info.id)).toBe(true);
    expect(store.resolve(token)).toBeNull();
    expect(store.revoke(info.id)).toBe(false);
  });

  it("keeps tokens across restarts, storing only their SHA-256", () => {
    const dir = dataDir();
    const first = new AgentTokenStore(dir);
    const { token, info } = first.create("kept", ["terminal:write"], null);
    expect(readFileSync(join(dir, "agent-tokens.json"), "utf8")).not.toContain(token.slice(4));
    const second = new AgentTokenStore(dir);
    expect(second.list()).toEqual([info]);
    expect(second.resolve(token)?.id).toBe(info.id);
  });
});
