import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { SessionInfo } from "../contract/types.ts";
import { startServerProcess, type ServerProcess } from "../testing/webmux-process.ts";
import { waitFor } from "../testing/wait.ts";
import { processAlive } from "../testing/process-alive.ts";

/** A shell whose master is only held by the server dies of the hang-up well within this. */
const HANGUP_TIMEOUT_MS = 15_000;

const cleanups: (() => void)[] = [];
afterAll(() => {
  for (const clean of cleanups.reverse()) clean();
});

async function create(server: ServerProcess, command: string[]): Promise<SessionInfo> {
  const res = await fetch(`${server.url}/api/sessions`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
    body: JSON.stringify({ command, env: { PS1: "$ " } }),
  });
  expect(res.status).toBe(201);
  return (await res.json()) as SessionInfo;
}

async function bufferOf(server: ServerProcess, id: string): Promise<string> {
  const res = await fetch(`${server.url}/api/sessions/${id}/buffer`, { headers: { authorization: `Bearer ${server.token}` } });
  return res.text();
}

function commandOf(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return null;
  }
}

const SHELL = ["bash", "--norc", "--noprofile", "-i"];
/**
 * The third session: lists its own shell's descriptors, leaves one `nohup` process and one it
 * detached on purpose with `setsid` in the background, then becomes an interactive shell.
 */
const THIRD = [
  "bash",
  "--norc",
  "--noprofile",
  "-c",
  [
    // ls, a child, lists the shell's descriptors (a glob in the shell would open one of its own)
    "ls -l /proc/$$/fd",
    "nohup sleep 300 >/dev/null 2>&1 & echo NOHUP=$!",
    "setsid sleep 301 >/dev/null 2>&1 < /dev/null & echo SETSID=$!",
    "echo LISTED",
    "exec bash --norc --noprofile -i",
  ].join("; "),
];

describe.each(["node", "bun"] as const)("the processes of a session under %s", (runtime) => {
  it("see only fds 0, 1 and 2, and every session's shell dies with the server except what was detached with setsid", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), `webmux-fds-${runtime}-`));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const server = await startServerProcess(dataDir, [], undefined, runtime);
    cleanups.push(() => server.proc.kill("SIGKILL"));

    const first = await create(server, SHELL);
    const second = await create(server, SHELL);
    await waitFor(async () => (await bufferOf(server, first.id)).includes("$ ") && (await bufferOf(server, second.id)).includes("$ "), { message: "two shells up" });
    const third = await create(server, THIRD);
    const listing = await waitFor(async () => {
      const text = await bufferOf(server, third.id);
      return text.includes("LISTED") ? text : null;
    }, { message: "the third session's listing" });

    const nohup = Number(/NOHUP=(\d+)/.exec(listing)![1]);
    const setsid = Number(/SETSID=(\d+)/.exec(listing)![1]);
    cleanups.push(() => {
      for (const pid of [nohup, setsid]) if (processAlive(pid)) process.kill(pid, "SIGKILL");
    });
    // nohup and setsid act before they exec sleep: a hang-up that comes earlier (a busy machine
    // may not have run them yet) would end them as it ends the shell.
    await waitFor(() => [nohup, setsid].every((pid) => commandOf(pid) === "sleep"), { message: "nohup and setsid have become sleep" });
    const fds = [...listing.matchAll(/ (\d+) -> (.*?)\r?$/gm)].map((m) => [Number(m[1]), m[2]] as const);
    expect(fds.map(([fd]) => fd).sort((a, b) => a - b), listing).toEqual([0, 1, 2]);
    expect(listing).not.toContain("/dev/ptmx");

    server.proc.kill("SIGKILL");
    await server.exit;
    const shells = { first: first.pid!, second: second.pid!, third: third.pid! };
    await waitFor(() => Object.values(shells).every((pid) => !processAlive(pid)), { timeout: HANGUP_TIMEOUT_MS, message: "every session's shell gone" }).catch((err: Error) => {
      throw new Error(`${err.message}; alive: ${JSON.stringify(Object.entries(shells).filter(([, pid]) => processAlive(pid)).map(([name]) => name))}`);
    });
    // What the user detached on purpose lives on, and so does its nohup'd job (it ignores the hang-up).
    expect(processAlive(setsid)).toBe(true);
    expect(processAlive(nohup)).toBe(true);
  }, 60_000);
});
