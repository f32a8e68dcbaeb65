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

/** How much of the end of a failed run's output is searched for the line that explains it. */
const FAILURE_TAIL_BYTES = 4096;
/** A failure line longer than this is cut: it goes into SessionInfo. */
const FAILURE_LINE_CHARS = 200;
/**
 * Escape sequences, to read what a terminal program printed as text: CSI, OSC (BEL or ST ended),
 * and every other ESC sequence — intermediates then a final byte, which covers ESC 7 / ESC 8
 * (save/restore cursor) and ESC ( B (charset) that a TUI prints around its last message.
 */
const ESCAPES = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[ -/]*[0-~]/g;
/** C0 controls other than tab and line ends (SI, SO, BEL, …): never text. */
const CONTROLS = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g;

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
  const { ring } = session;
  const bytes = ring.slice(Math.max(ring.start, ring.end - FAILURE_TAIL_BYTES), ring.end);
  const lines = new TextDecoder()
    .decode(bytes)
    .replace(ESCAPES, "")
    .replace(CONTROLS, "")
    .split(/\r?\n|\r/)
    .map((l) => l.trim())
    .filter(Boolean);
  return (lines.at(-1) ?? "").slice(0, FAILURE_LINE_CHARS);
}
