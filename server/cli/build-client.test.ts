import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { clientBuildIsStale } from "./build-client.ts";

let root: string;
const AT = Math.floor(Date.now() / 1000) + 1000;
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** A checkout-shaped tree: client/, server/contract/, dist/; every file dated `at` (seconds, in the
 * future, so the directories mkdir dates now never look newer than the build). */
function checkout(at: number): { dist: string; touch: (path: string, when: number) => void } {
  root = mkdtempSync(join(tmpdir(), "webmux-build-"));
  const touch = (path: string, when: number) => {
    const full = join(root, path);
    mkdirSync(join(full, ".."), { recursive: true });
    writeFileSync(full, "x");
    utimesSync(full, when, when);
  };
  touch("client/src/app.tsx", at);
  touch("server/contract/frames.ts", at);
  touch("dist/client/index.html", at + 10);
  return { dist: join(root, "dist/client"), touch };
}

describe("clientBuildIsStale", () => {
  it("is stale without a build, fresh when the build is newer than every input", () => {
    const { dist } = checkout(AT);
    expect(clientBuildIsStale(dist, root)).toBe(false);
    rmSync(join(dist, "index.html"));
    expect(clientBuildIsStale(dist, root)).toBe(true);
  });

  it("is stale after a client or contract source changes", () => {
    const { dist, touch } = checkout(AT);
    touch("server/contract/frames.ts", AT + 100);
    expect(clientBuildIsStale(dist, root)).toBe(true);
  });

  it("ignores tests beside the sources: they are not in the bundle", () => {
    const { dist, touch } = checkout(AT);
    touch("server/contract/frames.test.ts", AT + 100);
    touch("client/src/terminal/x.test.ts", AT + 100);
    expect(clientBuildIsStale(dist, root)).toBe(false);
  });
});
