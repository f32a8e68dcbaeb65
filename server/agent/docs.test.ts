import { execFile, spawnSync } from "node:child_process";
import { promisify } from "node:util";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../testing/test-server.ts";

const DOC = fileURLToPath(new URL("../../docs/agent-api.md", import.meta.url));
const hasCurl = spawnSync("curl", ["--version"]).status === 0;
const run = promisify(execFile);

/** The doc's ```sh blocks, in order, except the one that sets BASE and TOKEN (the test sets those). */
function shellBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
}

let server: TestServer;
beforeAll(async () => {
  // Sessions the examples start get an empty HOME: the same on every machine.
  process.env.HOME = mkdtempSync(join(tmpdir(), "webmux-docs-home-"));
  server = await startTestServer();
});
afterAll(async () => {
  await server?.stop();
});

describe("docs/agent-api.md", () => {
  it.skipIf(!hasCurl)("has curl examples that work as written against a real server", async () => {
    const blocks = shellBlocks(readFileSync(DOC, "utf8"));
    expect(blocks.length).toBeGreaterThanOrEqual(5);
    const outputs: string[] = [];
    for (const block of blocks) {
      // One block after the other, as a reader would paste them; the server runs in this process, so never block it.
      const { stdout } = await run("bash", ["-euo", "pipefail", "-c", block], { env: { ...process.env, BASE: server.url, TOKEN: server.token }, timeout: 20_000 });
      outputs.push(stdout);
    }
    const out = outputs.join("\n");
    expect(out).toContain('{"open_api":{"enabled":true}}');
    expect(out).toMatch(/"token":"dnt_[0-9a-f]{64}","token_info":\{"id":"tok_/);
    expect(out).toMatch(/\{"exit_code":1,"stdout":"a\\nb\\n","stderr":"","duration":\d+,"pane_id":"[a-z0-9]{8}","method":"shell_integration"\}/);
    expect(out).toContain('"exit_code":0,"stdout":"/tmp\\nhello\\n"');
    expect(out).toMatch(/\{"ok":true,"pane_id":"[a-z0-9]{8}"\}/);
    expect(out).toMatch(/"lines":\[.*\],"scrollback":\[.*\],"cursor":\{"row":\d+,"col":\d+\}/);
  });
});
