import { describe, expect, it } from "vitest";
import { isDark, parseBackgroundReply, parseXColor } from "./color-scheme.ts";
import { QueryScanner } from "./query-scanner.ts";

const bytes = (s: string) => new TextEncoder().encode(s);

describe("QueryScanner", () => {
  it("finds the device queries programs send, in order", () => {
    const q = new QueryScanner();
    const found = q.feed(
      bytes("text\x1b[6n\x1b[?6n\x1b[c\x1b[>c\x1b[=c\x1b[5n\x1b[?996n\x1b[?2004$p\x1b[18t\x1b[>q\x1b[?u\x1bP$qm\x1b\\\x1bP+q544e;636f\x1b\\\x1b]11;?\x07"),
    );
    expect(found).toEqual(["cpr", "cpr", "da1", "da2", "da3", "status", "scheme", "decrqm", "winops", "xtversion", "kitty", "decrqss", "xtgettcap", "xtgettcap", "osc11"]);
  });

  it("finds a query split at every byte boundary", () => {
    const seq = "ab\x1b]10;?;?\x1b\\cd\x1b[6n";
    const q = new QueryScanner();
    const found = [...seq].flatMap((ch) => q.feed(bytes(ch)));
    // OSC 10;?;? asks for the foreground and the background: two answers, OSC 10 and OSC 11
    expect(found).toEqual(["osc10", "osc11", "cpr"]);
  });

  it("ignores sequences that ask nothing: colours set, SGR, cursor moves, an OSC 52 copy", () => {
    const q = new QueryScanner();
    expect(q.feed(bytes("\x1b]11;#000000\x07\x1b[31m\x1b[6;1H\x1b[2J\x1b]52;c;aGVsbG8=\x07\x1b[?25l\x1b[8;24;80t"))).toEqual([]);
  });

  it("tracks the keyboard protocols a program leaves on", () => {
    const q = new QueryScanner();
    q.feed(bytes("\x1b[>1u\x1b[>3u\x1b[<u\x1b[>4;2m"));
    expect(q.kittyPushes).toBe(1);
    expect(q.modifyOtherKeys).toBe(2);
    q.feed(bytes("\x1b[<5u\x1b[>4;0m"));
    expect(q.kittyPushes).toBe(0);
    expect(q.modifyOtherKeys).toBe(0);
  });
});

describe("colour scheme from OSC 11", () => {
  it("reads the X colour forms terminals answer with", () => {
    expect(parseXColor("rgb:ffff/8080/0000")).toEqual({ r: 1, g: 0x8080 / 0xffff, b: 0 });
    expect(parseXColor("rgb:f/8/0")).toEqual({ r: 1, g: 8 / 15, b: 0 });
    expect(parseXColor("#ff0000")).toEqual({ r: 1, g: 0, b: 0 });
    expect(parseXColor("rgba:0000/0000/0000/ffff")).toEqual({ r: 0, g: 0, b: 0 });
    expect(parseXColor("black")).toBeNull();
  });

  it("judges dark and light backgrounds by luminance, BEL or ST terminated", () => {
    expect(isDark(parseBackgroundReply("\x1b]11;rgb:0000/0000/0000\x1b\\")!)).toBe(true);
    expect(isDark(parseBackgroundReply("\x1b]11;rgb:1e1e/1e1e/2e2e\x07")!)).toBe(true);
    expect(isDark(parseBackgroundReply("\x1b]11;rgb:ffff/ffff/ffff\x07")!)).toBe(false);
    expect(isDark(parseBackgroundReply("\x1b]11;rgb:fdfd/f6f6/e3e3\x1b\\")!)).toBe(false); // solarized light
    expect(parseBackgroundReply("\x1b]10;rgb:0000/0000/0000\x07")).toBeNull();
  });
});

describe("QueryScanner.strip (replayed bytes)", () => {
  const text = (b: Uint8Array) => Buffer.from(b).toString("latin1");
  const QUERIES = "\x1b[6n\x1b[5n\x1b[c\x1b[>c\x1b[=c\x1b[?2004$p\x1b[4$p\x1b]10;?\x07\x1b]11;?\x1b\\\x1b[?996n\x1bP$qm\x1b\\\x1b[?u\x1b[>q\x1b[14t";

  it("cuts every query out and keeps everything else byte for byte", () => {
    const q = new QueryScanner();
    const { output, owed } = q.strip(bytes(`a\x1b[31mred${QUERIES}\x1b[m\x1b]11;#000000\x07b\x1b[>1u`));
    // ST-terminated strings leave their harmless `ESC \`
    expect(text(output)).toBe("a\x1b[31mred\x1b\\\x1b\\\x1b[m\x1b]11;#000000\x07b\x1b[>1u");
    expect(owed).toEqual([]);
    expect(q.kittyPushes).toBe(1);
    expect(new QueryScanner().feed(output)).toEqual([]);
  });

  it("reports, instead of cutting, a query that began in a chunk already written", () => {
    const q = new QueryScanner();
    expect(text(q.strip(bytes("x\x1b[")).output)).toBe("x\x1b[");
    const { output, owed } = q.strip(bytes("6ny\x1b[c"));
    expect(text(output)).toBe("6ny");
    expect(owed).toEqual(["cpr"]);
  });
});
