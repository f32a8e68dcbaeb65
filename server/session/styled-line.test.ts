import xtermHeadless from "@xterm/headless";
import { describe, expect, it } from "vitest";
import { styledLine } from "./styled-line.js";

const { Terminal } = xtermHeadless;

/** The first `rows` lines of a fresh 40×5 terminal after `input`, styled. */
async function linesAfter(input: string, rows = 1): Promise<string[]> {
  const term = new Terminal({ cols: 40, rows: 5, allowProposedApi: true });
  await new Promise<void>((resolve) => term.write(input, resolve));
  const buffer = term.buffer.active;
  const scratch = buffer.getNullCell();
  const lines = Array.from({ length: rows }, (_, y) => styledLine(buffer.getLine(y), scratch));
  term.dispose();
  return lines;
}

describe("styledLine", () => {
  it("is the plain text for an unstyled line, trailing blanks trimmed", async () => {
    expect(await linesAfter("hello  world   ")).toEqual(["hello  world"]);
  });

  it("writes each change of style as one full SGR and closes a line that ends styled", async () => {
    expect(await linesAfter("ok \x1b[1;31mFAILED\x1b[0m done")).toEqual(["ok \x1b[0;1;31mFAILED\x1b[0m done"]);
    expect(await linesAfter("\x1b[32mgreen to the end")).toEqual(["\x1b[0;32mgreen to the end\x1b[0m"]);
  });

  it("keeps palette, bright, 256-colour and true colours, and emphasis", async () => {
    const [line] = await linesAfter("\x1b[94ma\x1b[0m\x1b[38;5;208mb\x1b[0m\x1b[48;2;1;2;3mc\x1b[0m\x1b[2;3;4;7;9md\x1b[0m");
    expect(line).toBe("\x1b[0;94ma\x1b[0;38;5;208mb\x1b[0;48;2;1;2;3mc\x1b[0;2;3;4;7;9md\x1b[0m");
  });

  it("keeps styled blanks (a coloured bar) and lines stand alone", async () => {
    const lines = await linesAfter("\x1b[41m   \x1b[0m\r\n\x1b[33mnext", 2);
    expect(lines).toEqual(["\x1b[0;41m   \x1b[0m", "\x1b[0;33mnext\x1b[0m"]);
  });

  it("writes a wide character once", async () => {
    expect(await linesAfter("\x1b[36m漢字\x1b[0m!")).toEqual(["\x1b[0;36m漢字\x1b[0m!"]);
  });
});
