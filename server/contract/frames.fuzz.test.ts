import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  decodeClientFrame,
  decodeServerFrame,
  encodeClientMessage,
  encodeServerMessage,
  type ClientMessage,
  type ServerMessage,
} from "./frames.ts";
import {
  MAX_COLS,
  MAX_QUERY_IDS,
  MAX_ROWS,
  MAX_SUBMIT_KEY_BYTES,
  MIN_COLS,
  MIN_ROWS,
  PREVIEW_LINES,
  clampGrid,
  isValidGeneration,
  sanitizeLabel,
} from "./protocol.ts";
import type { ControllerInfo, SessionInfo } from "./types.ts";
import { encodeUtf8 } from "./utf8.ts";

/** Enough cases to hit every opcode and reader branch many times while staying well under a second per property. */
const RUNS = 2000;

const anyText = fc.string({ unit: "binary", maxLength: 40 });
const clientId = fc.stringMatching(/^[A-Za-z0-9_-]{8,64}$/);
const sessionId = fc.stringMatching(/^[a-z0-9]{8}$/);
// fast-check keeps lengths "small" (≤ 10) by default; mixing in size "max" reaches the limits too.
const generation = fc
  .oneof(fc.string({ unit: "binary", minLength: 1, maxLength: 128 }), fc.string({ minLength: 1, maxLength: 128, size: "max" }))
  .filter(isValidGeneration);
const count = fc.nat({ max: Number.MAX_SAFE_INTEGER });
const cols = fc.integer({ min: MIN_COLS, max: MAX_COLS });
const rows = fc.integer({ min: MIN_ROWS, max: MAX_ROWS });
/** A grid the protocol accepts: each side in range and at most MAX_GRID_CELLS cells (its edge included). */
const grid = fc.record({ cols, rows }).map(({ cols, rows }) => clampGrid(cols, rows));
const bytes = (maxLength: number) => fc.oneof(fc.uint8Array({ maxLength }), fc.uint8Array({ maxLength, size: "max" }));

const controller: fc.Arbitrary<ControllerInfo | null> = fc.option(
  fc.record({ clientId, label: fc.string({ unit: "binary", maxLength: 60 }).map(sanitizeLabel), since: count }),
  { nil: null },
);

const sessionInfo: fc.Arbitrary<SessionInfo> = fc.record(
  {
    id: sessionId,
    title: anyText,
    command: fc.array(anyText, { maxLength: 4 }),
    cwd: fc.option(anyText, { nil: null }),
    pid: fc.option(fc.integer({ min: 1, max: 2 ** 31 - 1 }), { nil: null }),
    status: fc.constantFrom("running" as const, "exited" as const),
    exitCode: fc.option(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), { nil: null }),
    generation,
    createdAt: count,
    updatedAt: count,
    cols,
    rows,
    controller,
    clients: count,
    attention: fc.boolean(),
    preview: fc.array(anyText, { maxLength: PREVIEW_LINES }),
    hybrid: fc.option(
      fc.record(
        {
          agent: anyText,
          conversationId: anyText,
          previousConversationIds: fc.array(anyText, { maxLength: 3 }),
          end: fc.constantFrom("terminal" as const, "chat" as const),
          state: fc.constantFrom("starting" as const, "idle" as const, "busy" as const, "awaiting_permission" as const, "moving" as const, "parked" as const),
          error: anyText,
        },
        { requiredKeys: ["agent", "conversationId", "previousConversationIds", "end", "state"] },
      ),
      { nil: null },
    ),
  },
  { requiredKeys: ["id", "title", "command", "cwd", "pid", "status", "exitCode", "generation", "createdAt", "updatedAt", "cols", "rows", "controller", "clients", "attention", "preview"] },
);

const position = fc
  .record({ generation, mode: fc.constantFrom("reset" as const, "append" as const), a: count, b: count, truncated: fc.boolean() })
  .map(({ a, b, ...rest }) => ({ ...rest, start: Math.min(a, b), end: Math.max(a, b) }));

const serverMessage: fc.Arbitrary<ServerMessage> = fc.oneof(
  bytes(64).map((data) => ({ type: "output" as const, data })),
  bytes(64).map((data) => ({ type: "snapshot" as const, data })),
  sessionInfo.map((session) => ({ type: "status" as const, session })),
  fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }).map((exitCode) => ({ type: "exit" as const, exitCode })),
  position.map((p) => ({ type: "position" as const, position: p })),
  fc
    .record(
      {
        id: clientId,
        state: fc.constantFrom("received" as const, "written" as const, "partial" as const, "failed" as const, "missing" as const),
        error: fc.constantFrom("generation" as const, "invalid" as const, "write" as const),
      },
      { requiredKeys: ["id", "state"] },
    )
    .map((status) => ({ type: "submitStatus" as const, status })),
  fc.record({ controller, grid, colorSchemeReports: fc.boolean() }).map(({ grid, ...rest }) => ({ type: "control" as const, control: { ...rest, ...grid } })),
);

const clientMessage: fc.Arbitrary<ClientMessage> = fc.oneof(
  bytes(64).map((data) => ({ type: "input" as const, data })),
  grid.map((size) => ({ type: "resize" as const, ...size })),
  fc.constant({ type: "resync" as const }),
  fc
    .record({ id: clientId, generation, body: fc.oneof(bytes(64), anyText.map(encodeUtf8)), submitKey: bytes(MAX_SUBMIT_KEY_BYTES) })
    .map(({ id, generation, body, submitKey }) => ({
      type: "submit" as const,
      header: { id, generation, bodyBytes: body.length },
      body,
      submitKey,
    })),
  fc.array(clientId, { maxLength: MAX_QUERY_IDS, size: "max" }).map((ids) => ({ type: "querySubmissions" as const, ids })),
  fc.constant({ type: "takeControl" as const }),
  bytes(64).map((data) => ({ type: "autoReply" as const, data })),
  fc.constant({ type: "replayParsed" as const }),
);

/** A frame damaged the way a buggy or hostile peer might: bytes overwritten, cut short, extended, or its JSON text spliced. */
const mutation = fc.oneof(
  fc.record({ kind: fc.constant("set" as const), at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }),
  fc.record({ kind: fc.constant("truncate" as const), at: fc.nat() }),
  fc.record({ kind: fc.constant("append" as const), extra: bytes(MAX_SUBMIT_KEY_BYTES + 16) }),
  fc.record({ kind: fc.constant("splice" as const), at: fc.nat(), text: fc.constantFrom("null", "-1", "1.5", '"x"', "[]", "{}", "1e400", "\n", ",", "\\u0000") }),
);
type Mutation = typeof mutation extends fc.Arbitrary<infer M> ? M : never;

function mutate(frame: Uint8Array, mutations: Mutation[]): Uint8Array {
  let out = Uint8Array.from(frame);
  for (const m of mutations) {
    if (m.kind === "set" && out.length > 0) out[m.at % out.length] = m.value;
    if (m.kind === "truncate") out = out.subarray(0, m.at % (out.length + 1));
    if (m.kind === "append") out = Uint8Array.from([...out, ...m.extra]);
    if (m.kind === "splice" && out.length > 0) {
      const at = m.at % out.length;
      out = Uint8Array.from([...out.subarray(0, at), ...encodeUtf8(m.text), ...out.subarray(at + 1)]);
    }
  }
  return out;
}

/** Submit frames built by hand, header fields near and past their limits, tails of any length. */
const rawSubmitFrame = fc
  .record({
    id: fc.oneof(clientId, fc.string({ maxLength: 70 })),
    generation: fc.oneof(generation, fc.string({ maxLength: 2 })),
    rest: bytes(MAX_SUBMIT_KEY_BYTES * 3),
    bodyDelta: fc.integer({ min: -3, max: 3 }),
    bodyFraction: fc.double({ min: 0, max: 1, noNaN: true }),
  })
  .map(({ id, generation, rest, bodyDelta, bodyFraction }) => {
    const bodyBytes = Math.floor(rest.length * bodyFraction) + bodyDelta;
    return Uint8Array.from([0x03, ...encodeUtf8(JSON.stringify({ id, generation, bodyBytes })), 0x0a, ...rest]);
  });

/** A frame that decoded must re-encode, and the re-encoded frame must decode to the same message. */
function expectStableServer(frame: Uint8Array): void {
  const message = decodeServerFrame(frame);
  if (message.type === "invalid") return;
  expect(decodeServerFrame(encodeServerMessage(message))).toEqual(message);
}

function expectStableClient(frame: Uint8Array): void {
  const message = decodeClientFrame(frame);
  if (message.type === "invalid") return;
  expect(decodeClientFrame(encodeClientMessage(message))).toEqual(message);
}

describe("frame codec under fuzzing", () => {
  it("round-trips every valid server message", () => {
    fc.assert(fc.property(serverMessage, (m) => {
      expect(decodeServerFrame(encodeServerMessage(m))).toEqual(m);
    }), { numRuns: RUNS });
  });

  it("round-trips every valid client message", () => {
    fc.assert(fc.property(clientMessage, (m) => {
      expect(decodeClientFrame(encodeClientMessage(m))).toEqual(m);
    }), { numRuns: RUNS });
  });

  it("never throws on random bytes, and whatever decodes re-encodes stably", () => {
    const frame = fc.tuple(fc.integer({ min: 0, max: 8 }), bytes(96)).map(([op, rest]) => Uint8Array.from([op, ...rest]));
    fc.assert(
      fc.property(fc.oneof(frame, bytes(16), rawSubmitFrame), (f) => {
        expectStableServer(f);
        expectStableClient(f);
      }),
      { numRuns: RUNS },
    );
  });

  it("never throws on mutated server frames, and whatever decodes re-encodes stably", () => {
    fc.assert(
      fc.property(serverMessage, fc.array(mutation, { minLength: 1, maxLength: 4 }), (m, ms) => {
        expectStableServer(mutate(encodeServerMessage(m), ms));
      }),
      { numRuns: RUNS },
    );
  });

  it("never throws on mutated client frames, and whatever decodes re-encodes stably", () => {
    fc.assert(
      fc.property(clientMessage, fc.array(mutation, { minLength: 1, maxLength: 4 }), (m, ms) => {
        expectStableClient(mutate(encodeClientMessage(m), ms));
      }),
      { numRuns: RUNS },
    );
  });

  it("never throws on arbitrary JSON behind any opcode", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 6 }), fc.jsonValue(), (op, value) => {
        const f = Uint8Array.from([op, ...encodeUtf8(JSON.stringify(value))]);
        expectStableServer(f);
        expectStableClient(f);
      }),
      { numRuns: RUNS },
    );
  });
});
