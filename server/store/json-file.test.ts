import { mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, closeSync, rmSync, statSync, writeFileSync } from "node:fs";
import { spawn, spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadGlobalToken, readStoredGlobalToken } from "./global-token.ts";
import { JsonFile, writeJsonAtomic } from "./json-file.ts";
import { startTestServer } from "../testing/test-server.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "webmux-store-"));
  dirs.push(dir);
  return dir;
}
const leftovers = (dir: string) => readdirSync(dir).filter((name) => name.endsWith(".tmp"));

describe("JsonFile", () => {
  it("reads the fallback until written, then what was written, private to the user, with no temp file left", () => {
    const dir = tempDir();
    const file = new JsonFile(join(dir, "state", "settings.json"), () => ({ n: 0 }));
    expect(file.read()).toEqual({ n: 0 });
    file.write({ n: 1 });
    expect(file.read()).toEqual({ n: 1 });
    expect(statSync(file.path).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, "state")).mode & 0o777).toBe(0o700);
    expect(leftovers(join(dir, "state"))).toEqual([]);
  });

  it("replaces the file by rename: a reader holding the old file still reads the whole old version", () => {
    const dir = tempDir();
    const path = join(dir, "tokens.json");
    writeJsonAtomic(path, { version: "old", pad: "x".repeat(10_000) });
    const oldInode = statSync(path).ino;
    const reader = openSync(path, "r");
    try {
      writeJsonAtomic(path, { version: "new" });
      // An in-place rewrite would have truncated what `reader` sees; a rename leaves it whole.
      const buffer = Buffer.alloc(20_000);
      const length = readSync(reader, buffer, 0, buffer.length, 0);
      expect(JSON.parse(buffer.subarray(0, length).toString("utf8")).version).toBe("old");
    } finally {
      closeSync(reader);
    }
    expect(statSync(path).ino).not.toBe(oldInode);
    expect(JSON.parse(readFileSync(path, "utf8"))).toEqual({ version: "new" });
  });

  it("throws when the write cannot complete, leaving no temp file behind", () => {
    const dir = tempDir();
    const path = join(dir, "settings.json");
    mkdirSync(path); // rename onto a directory fails after the temp file was written
    writeFileSync(join(path, "keep"), "x");
    expect(() => writeJsonAtomic(path, { a: 1 })).toThrow();
    expect(leftovers(dir)).toEqual([]);
    expect(readFileSync(join(path, "keep"), "utf8")).toBe("x");
  });

  it("refuses a corrupt file with an error naming it, and never overwrites it", () => {
    const dir = tempDir();
    const path = join(dir, "settings.json");
    writeFileSync(path, "{oops");
    const file = new JsonFile(path, () => ({}));
    expect(() => file.read()).toThrow(/settings\.json is not valid JSON/);
    expect(readFileSync(path, "utf8")).toBe("{oops");
  });
});

describe("the global token", () => {
  it("is generated once and kept in the data dir, so later starts reuse it", () => {
    const dir = tempDir();
    const first = loadGlobalToken(dir, null);
    expect(first.generated).toBe(true);
    expect(first.token.length).toBeGreaterThanOrEqual(16);
    expect(statSync(join(dir, "global-token.json")).mode & 0o777).toBe(0o600);
    expect(loadGlobalToken(dir, null)).toEqual({ token: first.token, generated: false });
    expect(readStoredGlobalToken(dir)).toBe(first.token);
  });

  it("given by the user, is used as is and not written to disk", () => {
    const dir = tempDir();
    expect(loadGlobalToken(dir, "given-token-0123456789")).toEqual({ token: "given-token-0123456789", generated: false });
    expect(readdirSync(dir)).toEqual([]);
    expect(readStoredGlobalToken(dir)).toBeNull();
  });
});

describe("stale temporary files", () => {
  it("are removed when the server starts: those of dead processes and its own pid's, never another live process's", async () => {
    const dir = tempDir();
    const dead = spawnSync("true").pid!; // a pid that has exited
    const other = spawn("sleep", ["60"]);
    try {
      const stale = [`.settings.json.${dead}.1700000000000.tmp`, `.agent-tokens.json.${process.pid}.1700000000001.tmp`];
      const kept = [`.settings.json.${other.pid}.1700000000002.tmp`, "notes.tmp", "settings.json.tmp"];
      for (const name of [...stale, ...kept]) writeFileSync(join(dir, name), "{");
      const server = await startTestServer({ dataDir: dir });
      try {
        const left = readdirSync(dir);
        for (const name of stale) expect(left, name).not.toContain(name);
        for (const name of kept) expect(left, name).toContain(name);
        expect((await server.api("/api/health")).status).toBe(200);
      } finally {
        await server.stop();
      }
    } finally {
      other.kill();
    }
  });
});
