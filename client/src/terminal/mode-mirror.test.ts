// The mirror only uses xterm's parser API, which the headless build shares with the browser one.
import headless from "@xterm/headless";
import type { Terminal } from "@xterm/xterm";
import { describe, expect, it } from "vitest";
import { mirrorModes } from "./mode-mirror.ts";

function setup() {
  const terminal = new headless.Terminal({ cols: 80, rows: 24, allowProposedApi: true });
  const mirror = mirrorModes(terminal as unknown as Terminal);
  const write = (data: string) => new Promise<void>((resolve) => terminal.write(data, resolve));
  return { terminal, mirror, write };
}

describe("mirrorModes", () => {
  it("adds nothing for a terminal in its default state", async () => {
    const { mirror, write } = setup();
    await write("hello\r\n");
    expect(mirror.restoreSequence()).toBe("");
  });

  it("restores a hidden cursor, the SGR mouse encoding, the cursor style and the scroll region", async () => {
    const { mirror, write } = setup();
    await write("\x1b[?1049h\x1b[?25l\x1b[?1000;1006h\x1b[5 q\x1b[2;20r");
    expect(mirror.restoreSequence()).toBe("\x1b[?25l\x1b[?1006h\x1b[5 q\x1b7\x1b[2;20r\x1b8");
  });

  it("follows the program turning things back off", async () => {
    const { mirror, write } = setup();
    await write("\x1b[?25l\x1b[?1006h\x1b[3;10r");
    await write("\x1b[?25h\x1b[?1006l\x1b[r");
    expect(mirror.restoreSequence()).toBe("");
  });

  it("forgets everything on RIS and on a soft reset", async () => {
    const { mirror, write } = setup();
    await write("\x1b[?25l\x1b[4 q\x1bc");
    expect(mirror.restoreSequence()).toBe("");
    await write("\x1b[?25l\x1b[1;5r\x1b[!p");
    expect(mirror.restoreSequence()).toBe("");
  });

  it("lets xterm act on the sequences too", async () => {
    const { terminal, write } = setup();
    await write("\x1b[?1000h\x1b[?2004h");
    expect(terminal.modes.mouseTrackingMode).toBe("vt200");
    expect(terminal.modes.bracketedPasteMode).toBe(true);
  });
});
