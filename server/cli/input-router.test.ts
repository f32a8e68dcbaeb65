import { describe, expect, it } from "vitest";
import { parseDetachKey } from "./detach-key.ts";
import { HELD_SEQUENCE_MS, InputRouter, LOCAL_REPLY_WINDOW_MS, REPLY_WINDOW_MS, type InputAction } from "./input-router.ts";

const bytes = (s: string) => new TextEncoder().encode(s);
const text = (d: Uint8Array) => new TextDecoder().decode(d);

/** Actions as `kind:text` strings, easy to compare. */
function show(actions: InputAction[]): string[] {
  return actions.map((a) => (a.kind === "detach" ? "detach" : `${a.kind}:${JSON.stringify(text(a.data))}`));
}

function router(detach = "ctrl-\\") {
  let now = 1_000_000;
  const r = new InputRouter(parseDetachKey(detach), () => now);
  return { r, advance: (ms: number) => (now += ms) };
}

describe("InputRouter: keystrokes or replies", () => {
  it("passes typed text, arrows and a lone Esc through as input at once when no query is outstanding", () => {
    const { r } = router();
    expect(show(r.route(bytes("ls -l\r")))).toEqual(['input:"ls -l\\r"']);
    expect(show(r.route(bytes("\x1b[A\x1bOP")))).toEqual(['input:"\\u001b[A\\u001bOP"']);
    expect(show(r.route(bytes("\x1b")))).toEqual(['input:"\\u001b"']);
    expect(r.holding).toBe(false);
  });

  it("Shift+F3 and a cursor position report look the same: a reply only while a CPR query is outstanding", () => {
    const { r, advance } = router();
    expect(show(r.route(bytes("\x1b[1;2R")))).toEqual(['input:"\\u001b[1;2R"']);
    r.expect("cpr", "program");
    expect(show(r.route(bytes("\x1b[1;2R")))).toEqual(['reply:"\\u001b[1;2R"']);
    // answered: the next one is a key again
    expect(show(r.route(bytes("\x1b[1;2R")))).toEqual(['input:"\\u001b[1;2R"']);
    // a query the terminal never answered stops claiming keys after the reply window
    r.expect("cpr", "program");
    advance(REPLY_WINDOW_MS + 1);
    expect(show(r.route(bytes("\x1b[1;2R")))).toEqual(['input:"\\u001b[1;2R"']);
  });

  it("treats reply shapes no key produces as replies even without a query (late or unsolicited)", () => {
    const { r } = router();
    expect(show(r.route(bytes("\x1b[12;40R")))).toEqual(['reply:"\\u001b[12;40R"']);
    expect(show(r.route(bytes("\x1b[?62;22c")))).toEqual(['reply:"\\u001b[?62;22c"']);
    expect(show(r.route(bytes("\x1b[?997;2n")))).toEqual(['reply:"\\u001b[?997;2n"']);
    expect(show(r.route(bytes("\x1b[?2004;1$y")))).toEqual(['reply:"\\u001b[?2004;1$y"']);
    expect(show(r.route(bytes("\x1b]11;rgb:1e1e/1e1e/1e1e\x1b\\")))).toEqual(['reply:"\\u001b]11;rgb:1e1e/1e1e/1e1e\\u001b\\\\"']);
  });

  it("keeps the order of keys and replies that arrive in one read", () => {
    const { r } = router();
    r.expect("da1", "program");
    expect(show(r.route(bytes("ab\x1b[?62;22cc\x1b[B")))).toEqual(['input:"ab"', 'reply:"\\u001b[?62;22c"', 'input:"c\\u001b[B"']);
  });

  it("waits for the rest of a reply split across reads, and types a held Esc when nothing follows", () => {
    const { r } = router();
    r.expect("da1", "program");
    expect(show(r.route(bytes("x\x1b[?6")))).toEqual(['input:"x"']);
    expect(r.holding).toBe(true);
    expect(show(r.route(bytes("2;22c")))).toEqual(['reply:"\\u001b[?62;22c"']);
    r.expect("osc11", "program");
    expect(show(r.route(bytes("\x1b")))).toEqual([]);
    expect(r.holding).toBe(true);
    expect(HELD_SEQUENCE_MS).toBeLessThan(100); // Esc must still feel immediate
    expect(show(r.flushHeld())).toEqual(['input:"\\u001b"']);
  });

  it("drops answers to queries of a replayed snapshot and hands answers to its own queries back", () => {
    const { r } = router();
    r.expect("cpr", "replay");
    expect(show(r.route(bytes("\x1b[5;1R")))).toEqual([]);
    const seen: string[] = [];
    r.expect("osc11", "local", (reply) => seen.push(text(reply)));
    r.expect("osc11", "program");
    const actions = r.route(bytes("\x1b]11;rgb:0000/0000/0000\x07\x1b]11;rgb:0000/0000/0000\x07"));
    expect(show(actions)).toEqual(['local:"\\u001b]11;rgb:0000/0000/0000\\u0007"', 'reply:"\\u001b]11;rgb:0000/0000/0000\\u0007"']);
    for (const a of actions) if (a.kind === "local") a.onReply(a.data);
    expect(seen).toEqual(["\x1b]11;rgb:0000/0000/0000\x07"]);
  });

  it("keeps the CLI's own query open past the program's window: a slow link's late answer never reaches the program", () => {
    const { r, advance } = router();
    r.expect("osc11", "local", () => {});
    r.expect("cpr", "program");
    advance(REPLY_WINDOW_MS + 3_000);
    expect(show(r.route(bytes("\x1b]11;rgb:0000/0000/0000\x07")))[0]).toMatch(/^local:/);
    // The program's query did expire: its late answer is `CSI 1 ; 5 R`, which is also Ctrl+F3.
    expect(show(r.route(bytes("\x1b[1;5R")))).toEqual(['input:"\\u001b[1;5R"']);
    r.expect("osc11", "local", () => {});
    advance(LOCAL_REPLY_WINDOW_MS);
    expect(show(r.route(bytes("\x1b]11;rgb:0000/0000/0000\x07")))[0]).toMatch(/^reply:/);
  });

  it("dropLocal forgets the CLI's own unanswered queries, so a later answer goes to the program", () => {
    const { r } = router();
    r.expect("osc11", "local", () => {});
    r.dropLocal("osc11");
    expect(show(r.route(bytes("\x1b]11;rgb:ffff/ffff/ffff\x1b\\")))[0]).toMatch(/^reply:/);
  });
});

describe("InputRouter: the detach key", () => {
  it("sends what was typed before Ctrl-\\ and stops there", () => {
    const { r } = router();
    expect(show(r.route(bytes("ab\x1cxyz")))).toEqual(['input:"ab"', "detach"]);
  });

  it("recognises the key in the kitty keyboard and modifyOtherKeys encodings", () => {
    expect(show(router().r.route(bytes("\x1b[92;5u")))).toEqual(["detach"]);
    expect(show(router().r.route(bytes("q\x1b[27;5;92~")))).toEqual(['input:"q"', "detach"]);
  });

  it("is configurable, and `none` types Ctrl-\\ through to the program", () => {
    expect(show(router("^]").r.route(bytes("\x1c\x1d")))).toEqual(['input:"\\u001c"', "detach"]);
    expect(show(router("none").r.route(bytes("\x1c")))).toEqual(['input:"\\u001c"']);
  });

  it("refuses keys that cannot be reserved", () => {
    expect(() => parseDetachKey("ctrl-[")).toThrow(/Esc/);
    expect(() => parseDetachKey("ctrl-m")).toThrow(/Enter/);
    expect(() => parseDetachKey("alt-x")).toThrow(/--detach-key/);
    expect(parseDetachKey("C-a")?.byte).toBe(1);
  });
});
