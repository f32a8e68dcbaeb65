import { describe, expect, it } from "vitest";
import { exposureWarning, isLoopbackHost, localLoginLink, phoneLoginLink, type BannerInput } from "./serve-banner.ts";

const input = (over: Partial<BannerInput>): BannerInput => ({ url: "http://127.0.0.1:8999", host: "127.0.0.1", token: "t/k+n", tls: false, trustProxy: false, ...over });

describe("the start-up banner", () => {
  it("knows loopback addresses", () => {
    for (const host of ["127.0.0.1", "127.1.2.3", "localhost", "::1", "[::1]"]) expect(isLoopbackHost(host), host).toBe(true);
    for (const host of ["0.0.0.0", "::", "192.168.1.5", "127.0.0.1.example"]) expect(isLoopbackHost(host), host).toBe(false);
  });

  it("warns only for plain HTTP off loopback, and differently behind a trusted proxy", () => {
    expect(exposureWarning(input({}))).toBeNull();
    expect(exposureWarning(input({ host: "::1" }))).toBeNull();
    expect(exposureWarning(input({ host: "0.0.0.0", tls: true }))).toBeNull();
    expect(exposureWarning(input({ host: "192.168.1.5" }))).toMatch(/plain HTTP.*--tls-cert\/--tls-key.*--trust-proxy/);
    expect(exposureWarning(input({ host: "0.0.0.0", trustProxy: true }))).toMatch(/--trust-proxy while listening on 0\.0\.0\.0/);
    expect(exposureWarning(input({ trustProxy: true }))).toBeNull();
  });

  it("sends a local browser over loopback and a phone to the LAN address for a wildcard bind", () => {
    const wildcard = input({ url: "https://0.0.0.0:8999", host: "0.0.0.0" });
    expect(localLoginLink(wildcard)).toBe("https://127.0.0.1:8999/?token=t%2Fk%2Bn");
    expect(phoneLoginLink(wildcard, "192.168.1.5")).toBe("https://192.168.1.5:8999/?token=t%2Fk%2Bn");
    expect(phoneLoginLink(wildcard, null)).toBe("https://127.0.0.1:8999/?token=t%2Fk%2Bn");
    expect(localLoginLink(input({ url: "http://[::]:8999", host: "::" }))).toBe("http://127.0.0.1:8999/?token=t%2Fk%2Bn");
    expect(phoneLoginLink(input({ url: "http://192.168.1.5:8999", host: "192.168.1.5" }), "10.0.0.1")).toBe("http://192.168.1.5:8999/?token=t%2Fk%2Bn");
  });
});
