import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { isSameOrigin, parseForwarded, requestOrigin } from "./forwarded.ts";

function request(headers: Record<string, string>, encrypted = false): IncomingMessage {
  return { headers, socket: { encrypted } } as unknown as IncomingMessage;
}

describe("requestOrigin", () => {
  it("is the connection's own scheme and Host without --trust-proxy, whatever the headers claim", () => {
    const forged = { host: "box:8999", "x-forwarded-proto": "https", "x-forwarded-host": "evil.example", forwarded: "proto=https;host=evil.example" };
    expect(requestOrigin(request(forged), false)).toEqual({ scheme: "http", host: "box:8999" });
    expect(requestOrigin(request({ host: "box:8999" }, true), false)).toEqual({ scheme: "https", host: "box:8999" });
  });

  it("takes the first proxy's values with --trust-proxy, Forwarded before X-Forwarded-*", () => {
    expect(requestOrigin(request({ host: "127.0.0.1:8999", "x-forwarded-proto": "https, http", "x-forwarded-host": "phone.example, inner" }), true)).toEqual({
      scheme: "https",
      host: "phone.example",
    });
    expect(requestOrigin(request({ host: "b", forwarded: 'for=1.2.3.4;proto="https";host="a.example:8443", proto=http', "x-forwarded-proto": "http" }), true)).toEqual({
      scheme: "https",
      host: "a.example:8443",
    });
  });

  it("falls back to the direct values for a missing or malformed forwarded value", () => {
    expect(requestOrigin(request({ host: "box", "x-forwarded-proto": "gopher", "x-forwarded-host": "a b/c" }), true)).toEqual({ scheme: "http", host: "box" });
    expect(requestOrigin(request({ host: "box", "x-forwarded-proto": "HTTPS" }), true)).toEqual({ scheme: "https", host: "box" });
  });
});

describe("parseForwarded", () => {
  it("reads proto and host of the first element, quoted or not, any case", () => {
    expect(parseForwarded('For="[2001:db8::1]";Proto=https;Host=x.example, proto=http')).toEqual({ proto: "https", host: "x.example" });
    expect(parseForwarded(undefined)).toEqual({});
    expect(parseForwarded("garbage")).toEqual({});
  });
});

describe("isSameOrigin", () => {
  it("needs the scheme and host (default port folded) to match", () => {
    const via = (origin: string, extra: Record<string, string> = {}, encrypted = false) => isSameOrigin(request({ host: "box:8999", origin, ...extra }, encrypted), false);
    expect(via("http://box:8999")).toBe(true);
    expect(via("https://box:8999")).toBe(false);
    expect(via("https://box:8999", {}, true)).toBe(true);
    expect(via("http://box:8999", {}, true)).toBe(false);
    expect(via("null")).toBe(false);
    expect(isSameOrigin(request({ host: "box:443", origin: "https://box" }, true), false)).toBe(true);
    expect(isSameOrigin(request({ host: "box", origin: "http://box", "x-forwarded-proto": "https" }), true)).toBe(false);
    expect(isSameOrigin(request({ host: "box", origin: "https://box", "x-forwarded-proto": "https" }), true)).toBe(true);
  });
});
