/**
 * The differential property of docs/design.md § Snapshots through the real server: a program writes
 * random output from the grammar of terminal output (server/testing/vt-grammar.ts), floods that wrap
 * the ring come in between, the controller resizes the grid, and a second client drops and comes
 * back — with its old resume point and the screen it had (as a browser does), or fresh. Whenever it
 * is connected it shows what the client that stayed shows, cell by cell, modes and hidden state
 * included. Real server, real PTY, real WebSockets.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Session } from "../session/session.ts";
import { statesAtOnePoint } from "../testing/differential.ts";
import { stateDifferences } from "../testing/screen-state.ts";
import { TerminalClient } from "../testing/terminal-client.ts";
import { startTestServer, type TestServer } from "../testing/test-server.ts";
import { terminalOutput } from "../testing/vt-grammar.ts";
import { waitFor } from "../testing/wait.ts";

/** A small ring, so one flood truncates it. */
const RING_BYTES = 64 * 1024;
/** Lines of one flood: 18 bytes each, more than the ring holds. */
const FLOOD_LINES = 4000;
const FLOOD_LINE_BYTES = 18;
/** Lines of history above the screen compared too. */
const HISTORY_COMPARED = 200;
/** Deadline for anything a busy two-core machine does (a session's start, a flood, a replay). */
const SLOW_MS = 60_000;
/** Cases per run: each starts a session (~0.3 s alone); this many keep the file well under 30 s on two loaded cores. */
const RUNS = 30;
/** A fixed seed: the same cases every run, and the one to replay a failure with (fast-check prints it). */
const SEED = 1616;

/**
 * The program: in raw mode, `x<hex>.` writes those bytes, `f<n>.` writes n lines of
 * "flood line 00001\r\n". No echo, no output processing, so the ring grows by exactly what was asked.
 */
const WRITER = String.raw`$|=1; my $in = ""; while (sysread(STDIN, my $b, 65536)) { $in .= $b; while ($in =~ s/^([xf])([0-9a-f]*)\.//) { if ($1 eq "x") { print pack("H*", $2) } else { printf("flood line %05d\r\n", $_) for 1 .. $2 } } }`;

type Step =
  | { kind: "output"; bytes: Buffer }
  | { kind: "flood" }
  | { kind: "resize"; cols: number; rows: number }
  | { kind: "drop" }
  | { kind: "rejoin"; how: "resume" | "fresh"; after: string };

const size = fc.record({ cols: fc.integer({ min: 20, max: 60 }), rows: fc.integer({ min: 5, max: 16 }) });
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: terminalOutput(20).map((text): Step => ({ kind: "output", bytes: Buffer.from(text) })) },
  // Output cut at any byte: the ring can end inside an escape sequence or a UTF-8 character when a
  // client rejoins (docs/design.md § Snapshots), and the next output goes on from there.
  {
    weight: 2,
    arbitrary: fc.tuple(terminalOutput(20), fc.double({ min: 0, max: 1, noNaN: true })).map(([text, where]): Step => {
      const bytes = Buffer.from(text);
      return { kind: "output", bytes: bytes.subarray(0, Math.floor(where * bytes.length)) };
    }),
  },
  { weight: 2, arbitrary: fc.constant<Step>({ kind: "flood" }) },
  { weight: 2, arbitrary: size.map((s): Step => ({ kind: "resize", ...s })) },
  { weight: 2, arbitrary: fc.constant<Step>({ kind: "drop" }) },
  {
    weight: 2,
    arbitrary: fc.record({ how: fc.constantFrom("resume" as const, "fresh" as const), after: terminalOutput(20) }).map((r): Step => ({ kind: "rejoin", ...r })),
  },
);

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ bufferBytes: RING_BYTES });
});
afterAll(async () => {
  await server?.stop();
});

/**
 * One case: `steps`, then the second client back if it is away, and more output. After every
 * step the two clients are compared; a rejoin is compared again after its own output (state that
 * is wrong shows up only then).
 */
async function run(start: { cols: number; rows: number }, steps: Step[], last: string): Promise<void> {
  const info = await server.createSession({ command: ["bash", "--norc", "--noprofile", "-c", `stty raw -echo; exec perl -e '${WRITER}'`], cols: start.cols, rows: start.rows });
  const session: Session = server.registry.get(info.id)!;
  const connect = async (name: string, options: { screen?: { cols: number; rows: number }; terminal?: TerminalClient["term"] & object; resume?: { generation: string; offset: number } }) => {
    const client = await TerminalClient.connect(server.url, info.id, { token: server.token, client: name, ...options });
    // The status frame ends the replay (docs/protocol.md § Attach and replay order): after a reset
    // the position frame already puts the offset at the ring's end, before the snapshot arrives.
    await client.waitForFrames((f) => f.some((x) => x.type === "status"), SLOW_MS);
    return client;
  };
  const stayed = await connect("stayed", { screen: start });
  stayed.takeControl();
  let other: TerminalClient | null = await connect("other", { screen: { cols: 10, rows: 5 } });
  /** the other client while it is away: its screen and resume point */
  let away: { term: NonNullable<TerminalClient["term"]>; generation: string; offset: number } | null = null;
  const output = async (command: string, length: number) => {
    const end = session.stats().end + length;
    stayed.type(command);
    await waitFor(() => session.stats().end >= end, { timeout: SLOW_MS, message: `output up to ${end}` });
  };
  try {
    const compare = async (what: string) => {
      const clients = other === null ? [stayed] : [stayed, other];
      const [expected, actual] = await statesAtOnePoint(() => session.stats().end, clients, { scrollback: HISTORY_COMPARED, timeout: SLOW_MS });
      if (actual) expect(stateDifferences(expected!, actual), `${what} (the other client's last position: ${JSON.stringify(other?.position)})`).toEqual([]);
    };
    const writeOutput = (bytes: Buffer) => (bytes.length === 0 ? Promise.resolve() : output(`x${bytes.toString("hex")}.`, bytes.length));
    for (const [i, s] of [...steps, { kind: "rejoin", how: "resume", after: last } satisfies Step].entries()) {
      switch (s.kind) {
        case "output":
          await writeOutput(s.bytes);
          break;
        case "flood":
          await output(`f${FLOOD_LINES}.`, FLOOD_LINES * FLOOD_LINE_BYTES);
          break;
        case "resize": {
          if (session.cols === s.cols && session.rows === s.rows) break;
          stayed.resize(s.cols, s.rows);
          const resized = (c: TerminalClient | null) => c === null || (c.control?.cols === s.cols && c.control?.rows === s.rows);
          await waitFor(() => session.cols === s.cols && session.rows === s.rows && resized(stayed) && resized(other), { timeout: SLOW_MS, message: `resized to ${s.cols}×${s.rows}` });
          break;
        }
        case "drop":
          if (other === null) break;
          await other.close();
          away = { term: other.term!, generation: other.generation!, offset: other.offset };
          other = null;
          break;
        case "rejoin":
          if (other === null) {
            other =
              s.how === "resume" && away !== null
                ? await connect("other", { terminal: away.term, resume: { generation: away.generation, offset: away.offset } })
                : await connect("other", { screen: { cols: 10, rows: 5 } });
            away = null;
            await compare(`after step ${i} (rejoin, ${s.how})`);
          }
          await writeOutput(Buffer.from(s.after));
          break;
      }
      await compare(`after step ${i} (${s.kind})`);
    }
  } finally {
    await stayed.close();
    await other?.close();
    await server.api(`/api/sessions/${info.id}`, { method: "DELETE" });
  }
}

describe("a client that drops and comes back sees what a client that stayed sees (property)", () => {
  it("over random output, floods that wrap the ring, resizes and reconnects", { timeout: 8 * SLOW_MS }, async () => {
    await fc.assert(
      fc.asyncProperty(size, fc.array(step, { minLength: 2, maxLength: 10 }), terminalOutput(20), async (start, steps, last) => {
        await run(start, steps, last);
      }),
      // No shrinking: each try starts a session, and shrinking would outlast the deadline; the
      // seed and the failing case are in the report (replay them with `seed` and `path`).
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );
  });
});
