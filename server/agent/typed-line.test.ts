import { execFileSync } from "node:child_process";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { commandLine, keystrokes, type LineStyle } from "./typed-line.ts";

const integrated: LineStyle = { bracketedPaste: true, ansiCQuoting: true };
const plain: LineStyle = { bracketedPaste: false, ansiCQuoting: false };

/** What a shell prints for the typed line (without the keystroke framing), run non-interactively. */
function runLine(shell: string, line: string): string {
  return execFileSync(shell, ["-c", line], { encoding: "utf8", cwd: "/" });
}

/** Text without NUL (a terminal cannot type it; the API refuses it). */
const text = fc.string({ unit: "binary", maxLength: 40 }).filter((s) => !s.includes("\0"));

describe("commandLine", () => {
  it("runs any command text as exactly one command, with cwd and env values passed through unchanged (bash, zsh)", () => {
    fc.assert(
      fc.property(text, text, (value, printed) => {
        const command = `printf '%s|' "$V"; printf '%s' ${shellQuote(printed)}`;
        const line = commandLine({ command, cwd: "/tmp", env: { V: value } }, integrated);
        expect(line).not.toMatch(/[\x00-\x1f\x7f]/); // one line, nothing a line editor acts on
        for (const shell of ["bash", "zsh"]) expect(runLine(shell, line)).toBe(`${value}|${printed}`);
      }),
      { numRuns: 40 },
    );
  });

  it("does the same in a plain POSIX shell without $'…' (trailing newlines of a value aside)", () => {
    fc.assert(
      fc.property(text, (value) => {
        const line = commandLine({ command: `printf '%s' "$V"; pwd`, cwd: "/tmp", env: { V: value } }, plain);
        expect(line).not.toMatch(/[\x00-\x1f\x7f]/);
        expect(runLine("sh", line)).toBe(`${value.replace(/\n+$/, "")}/tmp\n`);
      }),
      { numRuns: 40 },
    );
  });

  it("keeps a run's cwd and env to itself, and runs one without them in the shell itself", () => {
    expect(runLine("bash", `${commandLine({ command: "X=1", cwd: "/tmp", env: { Y: "2" } }, integrated)}; pwd; echo "\${X-}\${Y-}."`)).toBe("/\n.\n");
    expect(runLine("bash", `${commandLine({ command: "cd /tmp; X=1" }, integrated)}; pwd; echo "$X"`)).toBe("/tmp\n1\n");
  });

  it("frames the line as one paste when the line editor has bracketed paste on, after cutting a half-typed line", () => {
    expect(keystrokes("eval 'ls'", integrated)).toBe("\x15\x1b[200~eval 'ls'\x1b[201~\r");
    expect(keystrokes("eval 'ls'", plain)).toBe("\x15eval 'ls'\r");
  });
});

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
