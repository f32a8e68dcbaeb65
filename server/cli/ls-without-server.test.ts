/**
 * `webmux ls` with no server: the data dir's session host answers (docs/design.md, What survives a
 * restart). Real processes: a `webmux serve` with its host, killed with SIGKILL, then the real CLI.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { SessionInfo } from "../contract/types.ts";
import { endDataDirs, listeningUrl, runWebmux, serverApi } from "../testing/webmux-process.ts";

const TOKEN = "ls-host-token-0123456789";
const dirs: string[] = [];

afterEach(() => endDataDirs(dirs));

const http = serverApi(TOKEN);
const create = (url: string, title: string): Promise<SessionInfo> => http.create(url, { command: ["sleep", "1000"], title });

describe("webmux ls without a server", () => {
  it("lists the sessions the session host keeps, with their ids, after the server was killed", async () => {
    const dir = mkdtempSync(join(tmpdir(), "webmux-ls-host-"));
    dirs.push(dir);
    const ls = (...args: string[]) => runWebmux(["ls", "--data-dir", dir, "--url", url, ...args], { isolated: true });

    const server = runWebmux(["serve", "--port", "0", "--data-dir", dir, "--token", TOKEN, "--no-qr"], { isolated: true });
    const url = await listeningUrl(server);
    const a = await create(url, "first-one");
    const b = await create(url, "second-one");
    server.proc.kill("SIGKILL");
    await server.exit;

    const table = ls();
    expect(await table.exit).toBe(0);
    expect(table.err()).toContain(`no server answers at ${url}; the session host of ${dir} holds these`);
    const rows = table.out().trim().split("\n");
    expect(rows[0]).toMatch(/^ID\s+STATUS\s+PID\s+SIZE\s+AGE\s+TITLE$/);
    expect(rows.slice(1).map((r) => r.split(/\s+/)[0]).sort()).toEqual([a.id, b.id].sort());
    expect(rows.find((r) => r.startsWith(a.id))).toMatch(new RegExp(`^${a.id}\\s+running\\s+${a.pid}\\s+80x24\\s+\\d+s\\s+first-one$`));

    const json = ls("--json");
    expect(await json.exit).toBe(0);
    const held = JSON.parse(json.out()) as { id: string; run: { generation: string } }[];
    expect(held.map((s) => [s.id, s.run.generation]).sort()).toEqual([[a.id, a.generation], [b.id, b.generation]].sort());
  }, 60_000);

  it("says the server is unreachable when no host runs either", async () => {
    const dir = mkdtempSync(join(tmpdir(), "webmux-ls-none-"));
    dirs.push(dir);
    const run = runWebmux(["ls", "--data-dir", dir, "--url", "http://127.0.0.1:1", "--token", TOKEN], { isolated: true });
    expect(await run.exit).toBe(1);
    expect(run.err()).toContain("cannot reach the webmux server at http://127.0.0.1:1");
  });
});
