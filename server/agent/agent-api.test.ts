/**
 * The Agent API's command tracker sees a shell from its first byte, also when that byte comes
 * before the program's pid (a session host answers a spawn and the shell's first prompt can
 * arrive in one read). Fake PTY: the marks are what webmux's bash integration prints.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { SessionRegistry } from "../session/registry.ts";
import { SettingsStore } from "../store/settings.ts";
import { fakePtys, type FakePty } from "../testing/fake-pty.ts";
import { waitFor } from "../testing/wait.ts";
import { AgentApi } from "./agent-api.ts";
import { SHELL_NONCE_VARIABLE } from "./marks.ts";
import { ShellIntegration } from "./shell-integration.ts";
import { AgentTokenStore } from "./tokens.ts";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

it("tracks a shell whose first prompt arrives before its pid: the first run is integrated, not left to prompt detection", async () => {
  const dir = mkdtempSync(join(tmpdir(), "webmux-agent-api-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const integration = new ShellIntegration(join(dir, "shell-integration"));
  const ptys = fakePtys();
  let started!: () => void;
  const registry = new SessionRegistry({
    shell: "/bin/bash",
    bufferBytes: 64 * 1024,
    prepareSpawn: integration.prepareSpawn,
    spawnPty: (options) => {
      const pty = ptys.spawn(options) as FakePty;
      started = pty.startLater();
      return pty;
    },
  });
  cleanups.push(() => registry.closeAll());
  const api = new AgentApi({ registry, settings: new SettingsStore(dir), tokens: new AgentTokenStore(dir), integration });
  cleanups.push(() => api.close());
  const session = registry.create({ cwd: "/tmp" }); // the login bash, with integration
  const nonce = ptys.last.options.env[SHELL_NONCE_VARIABLE];
  expect(nonce).toMatch(/^[0-9a-f]+$/);
  // The spawn's answer and the first prompt (A, then B with bracketed paste on) in one read.
  ptys.last.emit(`\x1b]133;A;status=0;webmux=${nonce}\x07$ \x1b[?2004h\x1b]133;B;webmux=${nonce}\x07`);
  started();
  await waitFor(() => session.pid !== null, { message: "the program runs" });
  expect(api.trackerOf(session.id)?.mode).toBe("integrated");
});
