/**
 * The message that rides with a handed terminal stream (docs/design.md § The session host serves
 * the streams) is read by the host inside its error boundary: anything but a well-formed message of
 * the two kinds is null, never a throw, and a cookie or token header never crosses.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { encodeHandedMessage, handedPrincipal, MAX_HANDED_MESSAGE_BYTES, parseHandedMessage, principalOf, type HandedMessage } from "./stream-handoff.ts";

const stream: HandedMessage = {
  type: "stream",
  conn: "c0nn",
  session: "abcd1234",
  url: "/ws/s/abcd1234?client=tab-1&compress=1",
  headers: { "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==", "sec-websocket-version": "13", upgrade: "websocket" },
  head: "",
  principal: { kind: "agent", id: "tok1", capabilities: ["terminal:read"] },
  address: "127.0.0.1",
};

const bytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

describe("parseHandedMessage", () => {
  it("reads both kinds back as they were encoded", () => {
    expect(parseHandedMessage(encodeHandedMessage(stream))).toEqual(stream);
    expect(parseHandedMessage(encodeHandedMessage({ type: "server", secret: "s3cret" }))).toEqual({ type: "server", secret: "s3cret" });
  });

  it("refuses a header the host does not need (a cookie, a token), an unknown capability, a URL that is not a path, and oversized messages", () => {
    expect(parseHandedMessage(bytes({ ...stream, headers: { ...stream.headers, cookie: "webmux=x" } }))).toBeNull();
    expect(parseHandedMessage(bytes({ ...stream, headers: { ...stream.headers, authorization: "Bearer x" } }))).toBeNull();
    expect(parseHandedMessage(bytes({ ...stream, principal: { ...stream.principal, capabilities: ["terminal:read", "root"] } }))).toBeNull();
    expect(parseHandedMessage(bytes({ ...stream, principal: { ...stream.principal, kind: "admin" } }))).toBeNull();
    expect(parseHandedMessage(bytes({ ...stream, url: "http://elsewhere/ws/s/abcd1234" }))).toBeNull();
    expect(parseHandedMessage(bytes({ ...stream, head: "x".repeat(MAX_HANDED_MESSAGE_BYTES) }))).toBeNull();
    expect(parseHandedMessage(bytes({ type: "server" }))).toBeNull();
    expect(parseHandedMessage(Uint8Array.of(0xff, 0xfe, 0x7b))).toBeNull();
    expect(parseHandedMessage(bytes([stream]))).toBeNull();
  });

  it("a principal crosses whole: its kind, id, capabilities and login cookie", () => {
    const principal = { kind: "global" as const, id: "global", capabilities: new Set(["terminal:read", "terminal:write"] as const), loginCookie: "abc" };
    expect(principalOf(handedPrincipal(principal))).toEqual(principal);
  });

  it("a credential's expiry crosses with it, as a whole number of ms; a malformed one refuses the message", () => {
    const principal = { kind: "agent" as const, id: "tok1", capabilities: new Set(["terminal:read"] as const) };
    expect(handedPrincipal(principal, 1_800_000_000_000.4)).toEqual({ kind: "agent", id: "tok1", capabilities: ["terminal:read"], expiresAt: 1_800_000_000_000 });
    expect(handedPrincipal(principal)).not.toHaveProperty("expiresAt");
    const withExpiry = { ...stream, principal: { ...stream.principal, expiresAt: 1_800_000_000_000 } };
    expect(parseHandedMessage(encodeHandedMessage(withExpiry))).toEqual(withExpiry);
    for (const expiresAt of [-1, 1.5, "soon", null, 2 ** 60]) expect(parseHandedMessage(bytes({ ...stream, principal: { ...stream.principal, expiresAt } }))).toBeNull();
  });

  it("never throws, whatever the bytes (fuzz)", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 512 }), (data) => {
        parseHandedMessage(data);
      }),
      { numRuns: 2000 },
    );
  });

  it("never throws on JSON near the real shapes, and accepts only complete ones (fuzz)", () => {
    const json = fc.jsonValue({ maxDepth: 2 });
    const near = fc.record(
      {
        type: fc.oneof(fc.constantFrom("stream", "server", "other"), json),
        secret: fc.oneof(fc.string(), json),
        conn: fc.oneof(fc.string(), json),
        session: fc.oneof(fc.string(), json),
        url: fc.oneof(fc.constantFrom("/ws/s/abcd1234", "ws/s/x"), json),
        headers: fc.oneof(fc.dictionary(fc.constantFrom("upgrade", "cookie", "sec-websocket-key"), fc.oneof(fc.string(), json)), json),
        head: fc.oneof(fc.string(), json),
        principal: fc.oneof(json, fc.record({ kind: fc.oneof(fc.constantFrom("global", "agent"), json), id: fc.oneof(fc.string(), json), capabilities: fc.oneof(fc.array(fc.constantFrom("terminal:read", "terminal:write", "x")), json) })),
        address: fc.oneof(fc.string(), json),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(near, (value) => {
        const parsed = parseHandedMessage(bytes(value));
        if (parsed?.type === "stream") {
          expect(Object.keys(parsed.headers).every((h) => h !== "cookie")).toBe(true);
          expect(parsed.url.startsWith("/")).toBe(true);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
