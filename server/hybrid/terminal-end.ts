/**
 * The terminal end of a hybrid session: the agent's TUI as one run (generation) of the webmux
 * Session that carries the session id, started with that run's command and stopped the agent's
 * way (a signal, SIGKILL after the grace).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { Session } from "../session/session.ts";
import type { TerminalLaunch, TerminalStop } from "./adapters/adapter.ts";
import { within } from "./adapters/agent-process.ts";
import { plainText } from "./adapters/plain-text.ts";

/** How much of the end of a failed run's output is searched for the line that explains it. */
const FAILURE_TAIL_BYTES = 4096;
/** A failure line longer than this is cut: it goes into SessionInfo. */
const FAILURE_LINE_CHARS = 200;

/** Resolves at the session's next exit, or at once when nothing runs. */
export function whenExited(session: Session): Promise<void> {
  if (session.status !== "running") return Promise.resolve();
  return new Promise((resolve) => {
    const off = session.events.on("exit", () => {
      off();
      resolve();
    });
  });
}

/** Write the run's hook settings (private: they name the relay) and start the TUI as a new generation. */
export function launchTerminal(session: Session, launch: TerminalLaunch): void {
  if (launch.hookSettings) {
    mkdirSync(dirname(launch.hookSettings.path), { recursive: true, mode: 0o700 });
    writeFileSync(launch.hookSettings.path, launch.hookSettings.text, { mode: 0o600 });
  }
  session.start(launch.command);
}

/** Stop the TUI: its stop signal, then SIGKILL after the grace; resolves once it has exited. */
export async function stopTerminal(session: Session, stop: TerminalStop): Promise<void> {
  if (session.status !== "running") return;
  const exited = whenExited(session);
  session.signal(stop.signal);
  if (await within(exited, stop.graceMs)) return;
  await session.terminate(0);
  await exited;
}

/** The last line a run printed, as plain text: why a program that exited at once did so. */
export function lastOutputLine(session: Session): string {
  const bytes = session.readOutput(session.stats().end - FAILURE_TAIL_BYTES);
  const lines = plainText(new TextDecoder().decode(bytes))
    .split(/\r?\n|\r/)
    .map((l) => l.trim())
    .filter(Boolean);
  return (lines.at(-1) ?? "").slice(0, FAILURE_LINE_CHARS);
}
