import { execFile, spawnSync } from "node:child_process";
import { promisify } from "node:util";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../testing/wait.ts";
import { listeningUrl, runWebmux, stopWebmuxProcesses } from "../testing/webmux-process.ts";

const DOC = fileURLToPath(new URL("../../docs/agent-api.md", import.meta.url));
const README = fileURLToPath(new URL("../../README.md", import.meta.url));
const hasCurl = spawnSync("curl", ["--version"]).status === 0;
const exec = promisify(execFile);

/** The ```sh blocks, in order, except the ```sh setup one that sets BASE and TOKEN (the test sets those). */
function shellBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
}

/** The README's `## Agent API` section. */
function agentSection(markdown: string): string {
  const start = markdown.indexOf("\n## Agent API\n");
  if (start < 0) throw new Error("README has no ## Agent API section");
  const end = markdown.indexOf("\n## ", start + 1);
  return markdown.slice(start, end < 0 ? undefined : end);
}

/** Each block run as a reader would paste it, one after the other, with the two variables set. */
async function runBlocks(blocks: string[], base: string, token: string): Promise<string> {
  const outputs: string[] = [];
  for (const block of blocks) {
    const { stdout } = await exec("bash", ["-euo", "pipefail", "-c", block], { env: { ...process.env, BASE: base, TOKEN: token }, timeout: 20_000 });
    outputs.push(stdout);
  }
  return outputs.join("\n");
}

let base: string;
let token: string;
beforeAll(async () => {
  // The README's server: the real `webmux serve --open-api`, on a free port with its own data dir.
  // Its sessions get an empty HOME and bash as the login shell: the same on every machine.
  const home = mkdtempSync(join(tmpdir(), "webmux-docs-home-"));
  const dataDir = mkdtempSync(join(tmpdir(), "webmux-docs-data-"));
  const server = runWebmux(["serve", "--stop-sessions-on-exit", "--port", "0", "--data-dir", dataDir, "--open-api", "--no-qr"], {
    env: { HOME: home, SHELL: "/bin/bash" },
  });
  base = await listeningUrl(server);
  // As the README says: stderr here is a pipe, so the login line names the file that keeps the token.
  const tokenFile = join(dataDir, "global-token.json");
  await waitFor(() => server.err().includes(tokenFile), { message: "login line naming the token file" });
  token = (JSON.parse(readFileSync(tokenFile, "utf8")) as { token: string }).token;
});
afterAll(() => {
  stopWebmuxProcesses();
});

describe.skipIf(!hasCurl)("curl examples against `webmux serve --open-api`", () => {
  it("README's Agent API section works as written", async () => {
    const blocks = shellBlocks(agentSection(readFileSync(README, "utf8")));
    expect(blocks.length).toBeGreaterThanOrEqual(1);
    const out = await runBlocks(blocks, base, token);
    expect(out).toMatch(/\{"exit_code":7,"stdout":"\/tmp\\na\\nb\\n","stderr":"","duration":\d+,"pane_id":"[a-z0-9]{8}","method":"shell_integration"\}/);
    expect(out).toMatch(/\{"ok":true,"pane_id":"[a-z0-9]{8}"\}/);
    expect(out).toMatch(/"lines":\[.*\],"scrollback":\[.*\],"cursor":\{"row":\d+,"col":\d+\}/);
    expect(out).toMatch(/"token":"dnt_[0-9a-f]{64}","token_info":\{"id":"tok_[^"]+","name":"ci","capabilities":\["terminal:read","terminal:write"\]/);
  });

  it("docs/agent-api.md works as written", async () => {
    const blocks = shellBlocks(readFileSync(DOC, "utf8"));
    expect(blocks.length).toBeGreaterThanOrEqual(5);
    const out = await runBlocks(blocks, base, token);
    expect(out).toContain('{"open_api":{"enabled":true}}');
    expect(out).toMatch(/"token":"dnt_[0-9a-f]{64}","token_info":\{"id":"tok_/);
    expect(out).toMatch(/\{"exit_code":1,"stdout":"a\\nb\\n","stderr":"","duration":\d+,"pane_id":"[a-z0-9]{8}","method":"shell_integration"\}/);
    expect(out).toContain('"exit_code":0,"stdout":"/tmp\\nhello\\n"');
    expect(out).toMatch(/\{"ok":true,"pane_id":"[a-z0-9]{8}"\}/);
    expect(out).toMatch(/"lines":\[.*\],"scrollback":\[.*\],"cursor":\{"row":\d+,"col":\d+\}/);
  });
});
