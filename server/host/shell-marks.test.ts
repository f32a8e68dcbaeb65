import { describe, expect, it } from "vitest";
import { TerminalScanner } from "../vt/terminal-scanner.ts";
import { ShellMarks } from "./shell-marks.ts";

const NONCE = "0123abcd";
const mark = (body: string, nonce = NONCE) => `\x1b]${body};webmux=${nonce}\x07`;

function follow(marks: ShellMarks, text: string): void {
  marks.follow(new TerminalScanner().feed(new TextEncoder().encode(text)));
}

describe("ShellMarks (the host's view of a shell's command)", () => {
  it("follows prompt, command and end through the marks with its nonce, and ignores forged ones", () => {
    const marks = new ShellMarks(NONCE);
    expect(marks.state.phase).toBe("starting");
    follow(marks, `${mark("133;A;status=0")}$ ${mark("133;B")}`);
    expect(marks.state.phase).toBe("prompt");
    follow(marks, `${mark("633;E;sleep 30")}${mark("133;C")}`);
    expect(marks.state).toMatchObject({ phase: "running", command: "sleep 30" });
    expect(marks.state.startedAt).toBeGreaterThan(0);
    // a program printing a mark without the nonce ends nothing
    follow(marks, `${mark("133;D;0", "forged")}${mark("133;A;status=0", "forged")}`);
    expect(marks.state.phase).toBe("running");
    follow(marks, mark("133;D;0"));
    expect(marks.state.phase).toBe("ended");
    follow(marks, mark("133;A;status=0"));
    expect(marks.state).toMatchObject({ phase: "prompt", command: "" });
  });

  it("says when the shell cannot integrate", () => {
    const marks = new ShellMarks(NONCE);
    follow(marks, mark("633;P;Integration=none"));
    expect(marks.state.phase).toBe("none");
  });
});
