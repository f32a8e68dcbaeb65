/**
 * The registry's announcements on a fake PTY whose program starts late, as one in the session
 * host does: a session is `added` before any of its output and `created` once its pid is known.
 */
import { afterEach, expect, it } from "vitest";
import { fakePtys, type FakePty } from "../testing/fake-pty.ts";
import { waitFor } from "../testing/wait.ts";
import { SessionRegistry } from "./registry.ts";

let registry: SessionRegistry | null = null;
afterEach(async () => {
  await registry?.closeAll();
  registry = null;
});

it("adds a session before its first output, which may come before its pid, and announces it once the program runs", async () => {
  const ptys = fakePtys();
  let started!: () => void;
  registry = new SessionRegistry({
    shell: "/bin/sh",
    bufferBytes: 64 * 1024,
    spawnPty: (options) => {
      const pty = ptys.spawn(options) as FakePty;
      started = pty.startLater();
      return pty;
    },
  });
  const seen: string[] = [];
  registry.events.on("added", (session) => {
    seen.push(`added, pid ${session.pid}`);
    session.events.on("output", (chunk) => seen.push(`output ${new TextDecoder().decode(chunk)}`));
  });
  registry.events.on("created", (session) => seen.push(`created, pid ${session.pid}`));
  registry.create({ command: ["sh"], cwd: "/tmp" });
  // The host's answer with the pid and the shell's first prompt arrive in one read.
  ptys.last.emit("$ ");
  started();
  await waitFor(() => seen.some((e) => e.startsWith("created")), { message: "the session announced" });
  expect(seen).toEqual(["added, pid null", "output $ ", "created, pid 4242"]);
});
