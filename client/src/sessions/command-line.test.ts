import { describe, expect, it } from "vitest";
import { splitCommandLine } from "./command-line.ts";

describe("splitCommandLine", () => {
  it("splits on blanks and keeps quoted blanks", () => {
    expect(splitCommandLine(`  vim  "my file.txt" 'it''s'  `)).toEqual({ argv: ["vim", "my file.txt", "its"] });
  });
  it("treats backslashes like a shell", () => {
    expect(splitCommandLine(String.raw`echo a\ b "c\"d" "e\f" 'g\h'`)).toEqual({ argv: ["echo", "a b", 'c"d', "e\\f", "g\\h"] });
  });
  it("keeps empty quoted words", () => {
    expect(splitCommandLine(`printf '' x`)).toEqual({ argv: ["printf", "", "x"] });
  });
  it("gives nothing for a blank line", () => {
    expect(splitCommandLine("   ")).toEqual({ argv: [] });
  });
  it("refuses an open quote or a trailing backslash", () => {
    expect(splitCommandLine(`echo "abc`)).toHaveProperty("error");
    expect(splitCommandLine(`echo abc\\`)).toHaveProperty("error");
  });
});
