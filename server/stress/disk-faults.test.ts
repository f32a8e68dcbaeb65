import { execFile } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import type { Settings, TokenInfo } from "../contract/types.ts";
import { startTestServer } from "../testing/test-server.ts";
import { TinyFs } from "../testing/tiny-fs.ts";

const ROOT = join(import.meta.dirname, "..", "..");
const run = promisify(execFile);
const mounted: TinyFs[] = [];
afterEach(() => {
  for (const fs of mounted.splice(0)) fs.unmount();
});

/** A tiny tmpfs, or a skipped test where this machine does not let us mount one. */
function tinyFs(skip: (note: string) => void): TinyFs {
  const fs = TinyFs.mount();
  if (!fs) {
    skip("needs `mount -t tmpfs` (root or CAP_SYS_ADMIN) for a real full or read-only filesystem");
    throw new Error("unreachable");
  }
  mounted.push(fs);
  return fs;
}

/** `webmux serve` that is expected to refuse to start: its exit code and stderr. */
async function serveRefuses(dataDir: string, extra: string[] = []): Promise<{ code: number; stderr: string }> {
  try {
    await run(process.execPath, ["bin/webmux.js", "serve", "--stop-sessions-on-exit", "--port", "0", "--data-dir", dataDir, ...extra], { cwd: ROOT, timeout: 20_000 });
    throw new Error("webmux serve started on a data dir it cannot use");
  } catch (err) {
    const e = err as { code?: number; stderr?: string };
    return { code: e.code ?? -1, stderr: e.stderr ?? "" };
  }
}

const snapshot = (dir: string) => Object.fromEntries(readdirSync(dir).filter((f) => f.endsWith(".json")).map((f) => [f, readFileSync(join(dir, f), "utf8")]));
const leftovers = (dir: string) => readdirSync(dir, { recursive: true }).map(String).filter((f) => f.endsWith(".tmp"));

describe("a full disk", () => {
  it("at first start: one clear line and exit 1, nothing half-written", async (ctx) => {
    const fs = tinyFs(ctx.skip);
    fs.fill();
    const { code, stderr } = await serveRefuses(fs.dir);
    expect(code).toBe(1);
    expect(stderr.trim().split("\n")).toEqual([expect.stringMatching(new RegExp(`^webmux: cannot use data dir ${fs.dir}: .*ENOSPC`))]);
    expect(snapshot(fs.dir)).toEqual({});
  });

  it("during a settings or token write: a clear 500, the old file and the old state intact, and it recovers once there is room", async (ctx) => {
    const fs = tinyFs(ctx.skip);
    const server = await startTestServer({ dataDir: fs.dir });
    try {
      expect((await server.api("/api/settings", { method: "PUT", json: { open_api: { enabled: true } } })).status).toBe(200);
      const created = await server.api("/api/tokens", { method: "POST", json: { name: "kept", capabilities: ["terminal:read"] } });
      expect(created.status).toBe(201);
      const kept = (await created.json()) as { token: string; token_info: TokenInfo };
      const before = snapshot(fs.dir);
      expect(Object.keys(before).sort()).toEqual(["agent-tokens.json", "settings.json"]);

      fs.fill();
      const put = await server.api("/api/settings", { method: "PUT", json: { open_api: { enabled: false } } });
      expect(put.status).toBe(500);
      expect(await put.json()).toEqual({ error: { code: "INTERNAL_ERROR", message: expect.stringMatching(/^cannot save settings: ENOSPC/) } });
      const token = await server.api("/api/tokens", { method: "POST", json: { name: "lost", capabilities: ["terminal:read"] } });
      expect(token.status).toBe(500);
      expect(((await token.json()) as { error: { message: string } }).error.message).toMatch(/^cannot save the token: ENOSPC/);
      const revoke = await server.api(`/api/tokens/${kept.token_info.id}`, { method: "DELETE" });
      expect(revoke.status).toBe(500);
      expect(((await revoke.json()) as { error: { message: string } }).error.message).toMatch(/^cannot save the token list: ENOSPC/);

      // nothing changed, on disk or in the server
      expect(snapshot(fs.dir)).toEqual(before);
      expect(leftovers(fs.dir)).toEqual([]);
      expect((await (await server.api("/api/settings")).json()) as Settings).toEqual({ open_api: { enabled: true } });
      const tokens = ((await (await server.api("/api/tokens")).json()) as { tokens: TokenInfo[] }).tokens;
      expect(tokens.map((t) => t.name)).toEqual(["kept"]);
      expect((await fetch(`${server.url}/api/sessions`, { headers: { authorization: `Bearer ${kept.token}` } })).status).toBe(200);

      fs.free();
      expect((await server.api("/api/settings", { method: "PUT", json: { open_api: { enabled: false } } })).status).toBe(200);
      expect(JSON.parse(readFileSync(join(fs.dir, "settings.json"), "utf8"))).toEqual({ open_api: { enabled: false } });
    } finally {
      await server.stop();
    }
  });
});

describe("an unwritable data dir", () => {
  it("at start: one clear line and exit 1, the files already there intact", async (ctx) => {
    const fs = tinyFs(ctx.skip);
    writeFileSync(join(fs.dir, "settings.json"), '{\n  "open_api": {\n    "enabled": true\n  }\n}\n');
    writeFileSync(join(fs.dir, "global-token.json"), JSON.stringify({ token: "kept-token-0123456789abcdef", created_at: 1 }));
    const before = snapshot(fs.dir);
    fs.readOnly();
    const { code, stderr } = await serveRefuses(fs.dir);
    expect(code).toBe(1);
    expect(stderr.trim().split("\n")).toEqual([expect.stringMatching(new RegExp(`^webmux: cannot use data dir ${fs.dir}: EROFS`))]);
    expect(snapshot(fs.dir)).toEqual(before);
  });
});
