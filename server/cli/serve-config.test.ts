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
