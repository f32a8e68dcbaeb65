/**
 * Test helper: the CLI running inside a real PTY (node-pty), which plays the user's terminal
 * emulator. Tests read what the CLI drew, type into it, resize it and answer its queries.
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import xtermHeadless from "@xterm/headless";
import { spawn, type IPty } from "node-pty";
import { waitFor } from "../testing/wait.ts";

const WEBMUX_BIN = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "bin", "webmux.js");

export type OuterExit = { exitCode: number; signal?: number | undefined };

export class OuterTerminal {
  private readonly pty: IPty;
  /** everything the CLI wrote to its terminal */
  output = "";
  readonly exited: Promise<OuterExit>;
  exit: OuterExit | null = null;

  /**
   * Runs `webmux <args>` in a fresh PTY. `then` is a shell command run in the same PTY after webmux
   * exits (e.g. `stty -a`, to see how webmux left the terminal); webmux's status stays the exit code.
   */
  constructor(args: string[], env: Record<string, string>, { cols = 80, rows = 24, then }: { cols?: number; rows?: number; then?: string } = {}) {
    const base: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("WEBMUX_")) base[k] = v;
    const [file, argv] = then
      ? ["/bin/sh", ["-c", `"$@"; status=$?; ${then}; exit $status`, "sh", process.execPath, WEBMUX_BIN, ...args]]
      : [process.execPath, [WEBMUX_BIN, ...args]];
    this.pty = spawn(file, argv, {
      name: "xterm-256color",
      cols,
      rows,
      cwd: process.cwd(),
      env: { ...base, ...env },
    });
    this.pty.onData((data) => {
      this.output += data;
    });
    this.exited = new Promise((resolve) => {
      this.pty.onExit((exit) => {
        this.exit = exit;
        resolve(exit);
      });
    });
  }

  /** Wait until the output after `from` matches; returns the index just past the match. */
  async waitForOutput(needle: string | RegExp, { from = 0, timeout = 15_000 } = {}): Promise<number> {
    let end = -1;
    await waitFor(
      () => {
        const tail = this.output.slice(from);
        if (typeof needle === "string") {
          const at = tail.indexOf(needle);
          if (at !== -1) end = from + at + needle.length;
        } else {
          const match = needle.exec(tail);
          if (match) end = from + match.index + match[0].length;
        }
        return end !== -1 || this.exit !== null;
      },
      { timeout, message: `terminal output matching ${needle}` },
    );
    if (end === -1) throw new Error(`the CLI exited (${JSON.stringify(this.exit)}) before printing ${needle}; it printed:\n${JSON.stringify(this.output.slice(-2000))}`);
    return end;
  }

  type(text: string): void {
    this.pty.write(text);
  }

  /** The CLI's process ID (to stop and continue it). */
  get pid(): number {
    return this.pty.pid;
  }

  /**
   * From now on the terminal answers device queries the way a real one does: an xterm.js parses
   * what the CLI writes and its answers (DSR, DA, DECRQM, …) are typed back.
   */
  answerQueries(): { parsed(): Promise<void> } {
    const term = new xtermHeadless.Terminal({ cols: this.pty.cols, rows: this.pty.rows, allowProposedApi: true });
    this.pty.onData((data) => term.write(data));
    term.onData((answer) => this.pty.write(answer));
    void this.exited.then(() => term.dispose());
    // Resolves once everything the CLI wrote so far is parsed, so its answers have been typed.
    return { parsed: () => new Promise<void>((resolve) => term.write("", resolve)) };
  }

  resize(cols: number, rows: number): void {
    this.pty.resize(cols, rows);
  }

  async exitCode(timeout = 15_000): Promise<number> {
    await waitFor(() => this.exit !== null, { timeout, message: "the CLI to exit" });
    return this.exit!.exitCode;
  }

  kill(): void {
    if (this.exit === null) this.pty.kill("SIGKILL");
  }
}
