import { describe, expect, it } from "vitest";
import { DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_CONNECTIONS_PER_ADDRESS } from "../hub/connection-limit.ts";
import { UsageError } from "./args.ts";
import { parseServeConfig } from "./serve-config.ts";

describe("serve connection limits", () => {
  it("default to 4096 in all and 256 per address", () => {
    const config = parseServeConfig([], {});
    expect([config.maxConnections, config.maxConnectionsPerAddress]).toEqual([DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_CONNECTIONS_PER_ADDRESS]);
    expect([DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_CONNECTIONS_PER_ADDRESS]).toEqual([4096, 256]);
  });

  it("come from flags or WEBMUX_* variables, the flag winning; a lower total lowers the per-address default", () => {
    expect(parseServeConfig(["--max-connections", "100"], {})).toMatchObject({ maxConnections: 100, maxConnectionsPerAddress: 100 });
    expect(parseServeConfig([], { WEBMUX_MAX_CONNECTIONS: "900", WEBMUX_MAX_CONNECTIONS_PER_ADDRESS: "30" })).toMatchObject({
      maxConnections: 900,
      maxConnectionsPerAddress: 30,
    });
    expect(parseServeConfig(["--max-connections-per-address=12"], { WEBMUX_MAX_CONNECTIONS_PER_ADDRESS: "30" }).maxConnectionsPerAddress).toBe(12);
  });

  it("refuse zero, signs and words with a usage error", () => {
    for (const value of ["0", "-1", "ten", "1e3"]) {
      expect(() => parseServeConfig(["--max-connections", value], {}), value).toThrow(UsageError);
    }
    expect(() => parseServeConfig([], { WEBMUX_MAX_CONNECTIONS_PER_ADDRESS: "0" })).toThrow(/between 1 and/);
  });
});

describe("serve TLS, proxy and QR flags", () => {
  it("default to plain HTTP, no proxy trusted, QR on", () => {
    expect(parseServeConfig([], {})).toMatchObject({ tls: null, trustProxy: false, qr: true });
  });

  it("take a certificate and key together, as absolute paths, from flags or WEBMUX_* variables", () => {
    const config = parseServeConfig(["--tls-cert", "c.pem", "--tls-key=k.pem", "--trust-proxy", "--no-qr"], {});
    expect(config.tls).toEqual({ certFile: expect.stringMatching(/^\/.*\/c\.pem$/), keyFile: expect.stringMatching(/^\/.*\/k\.pem$/) });
    expect(config).toMatchObject({ trustProxy: true, qr: false });
    expect(parseServeConfig([], { WEBMUX_TLS_CERT: "/a/c.pem", WEBMUX_TLS_KEY: "/a/k.pem", WEBMUX_TRUST_PROXY: "1", WEBMUX_NO_QR: "yes" })).toMatchObject({
      tls: { certFile: "/a/c.pem", keyFile: "/a/k.pem" },
      trustProxy: true,
      qr: false,
    });
  });

  it("refuse one of the pair alone with a usage error", () => {
    expect(() => parseServeConfig(["--tls-cert", "c.pem"], {})).toThrow(UsageError);
    expect(() => parseServeConfig([], { WEBMUX_TLS_KEY: "k.pem" })).toThrow(/go together/);
  });
});
