import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { TerminalClient } from "./testing/terminal-client.ts";
import { waitFor } from "./testing/wait.ts";

const BUN = join(import.meta.dirname, "..", "node_modules", ".bin", "bun");
const TOKEN = "bun-smoke-token-0123456789";

let child: ChildProcess | null = null;
let dataDir: string | null = null;
afterAll(() => {
  child?.kill("SIGKILL");
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/** Start `bun server/main.ts serve --port 0` and read the port from its `listening on` line. */
async function startUnderBun(): Promise<{ url: string; proc: ChildProcess; stderr: () => string }> {
  dataDir = mkdtempSync(join(tmpdir(), "webmux-bun-"));
  const proc = spawn(BUN, ["server/main.ts", "serve", "--stop-sessions-on-exit", "--port", "0", "--data-dir", dataDir, "--token", TOKEN], {
    cwd: join(import.meta.dirname, ".."),
    stdio: ["ignore", "pipe", "pipe"],
  });
  child = proc;
  let stdout = "";
  let stderr = "";
  proc.stdout!.on("data", (d) => (stdout += d));
  proc.stderr!.on("data", (d) => (stderr += d));
  const line = await waitFor(() => /listening on (http:\/\/\S+)/.exec(stdout)?.[1], { timeout: 20_000, message: "listening line from bun" }).catch((err) => {
    throw new Error(`${err.message}\nstderr: ${stderr}`);
  });
  return { url: line, proc, stderr: () => stderr };
}

describe("the server under Bun", () => {
  it("creates a session, reads its output over HTTP and WebSocket, and shuts down on SIGTERM", async () => {
    // Bun is a devDependency: a checkout without it fails here rather than skipping the proof.
    expect(existsSync(BUN), `${BUN} is missing: run npm install`).toBe(true);
    const { url, proc, stderr } = await startUnderBun();
    const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
    const created = await fetch(`${url}/api/sessions`, {
      method: "POST",
      headers,
      body: JSON.stringify({ command: ["bash", "--norc", "--noprofile", "-c", "echo from-bun-$((40+2)); stty size; sleep 30"], cols: 90, rows: 30 }),
    });
    expect(created.status, stderr()).toBe(201);
    const { id } = (await created.json()) as { id: string };
    await waitFor(async () => {
      const res = await fetch(`${url}/api/sessions/${id}/buffer`, { headers });
      return (await res.text()).includes("30 90");
    }, { timeout: 15_000, message: "session output" });
    const body = await (await fetch(`${url}/api/sessions/${id}/buffer`, { headers })).text();
    expect(body).toContain("from-bun-42");
    const client = await TerminalClient.connect(url, id, { token: TOKEN });
    await client.waitForText("from-bun-42");
    expect(client.position).toMatchObject({ mode: "reset", start: 0, truncated: false });
    await client.close();
    const exited = new Promise<number | null>((resolve) => proc.once("exit", (code) => resolve(code)));
    proc.kill("SIGTERM");
    expect(await exited).toBe(0);
  }, 60_000);
});
