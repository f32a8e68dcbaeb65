import { describe, expect, it } from "vitest";
import { DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_CONNECTIONS_PER_ADDRESS } from "../hub/connection-limit.ts";
import { usage, UsageError } from "./args.ts";
import { parseServeConfig, SERVE_FLAGS } from "./serve-config.ts";

describe("the serve flags (README's table)", () => {
  // flag, its variable, a value, and what the config then holds
  const flags: [flag: string, variable: string, value: string, expected: Record<string, unknown>][] = [
    ["--host", "WEBMUX_HOST", "0.0.0.0", { host: "0.0.0.0" }],
    ["--port", "WEBMUX_PORT", "0", { port: 0 }],
    ["--token", "WEBMUX_TOKEN", "a-token-of-16-chars", { token: "a-token-of-16-chars" }],
    ["--data-dir", "WEBMUX_DATA_DIR", "/srv/webmux", { dataDir: "/srv/webmux" }],
    ["--shell", "WEBMUX_SHELL", "/bin/zsh", { shell: "/bin/zsh" }],
    ["--buffer-bytes", "WEBMUX_BUFFER_BYTES", "65536", { bufferBytes: 65536 }],
    ["--max-sessions", "WEBMUX_MAX_SESSIONS", "12", { maxSessions: 12 }],
    ["--open-api", "WEBMUX_OPEN_API", "1", { openApi: true }],
    ["--stop-sessions-on-exit", "WEBMUX_STOP_SESSIONS_ON_EXIT", "1", { sessionHost: false, stopSessionsOnExit: true }],
  ];

  it("have their defaults", () => {
    expect(parseServeConfig([], { HOME: "/home/u", SHELL: "/bin/fish" })).toMatchObject({
      host: "127.0.0.1",
      port: 8999,
      token: null,
      shell: "/bin/fish",
      bufferBytes: 4 * 1024 * 1024,
      maxSessions: 100,
      openApi: null,
      // sessions outlive the server in the data dir's session host unless --stop-sessions-on-exit
      sessionHost: true,
      stopSessionsOnExit: false,
    });
    expect(() => parseServeConfig(["--max-sessions", "0"], {})).toThrow(UsageError);
    expect(parseServeConfig([], { XDG_STATE_HOME: "/x/state" }).dataDir).toBe("/x/state/webmux");
    expect(parseServeConfig([], {}).shell).toBe("/bin/bash");
  });

  it.each(flags)("%s is read from the flag and from %s, and is in --help with its variable", (flag, variable, value, expected) => {
    const argv = flag === "--open-api" || flag === "--stop-sessions-on-exit" ? [flag] : [flag, value];
    expect(parseServeConfig(argv, {})).toMatchObject(expected);
    expect(parseServeConfig([], { [variable]: value })).toMatchObject(expected);
    const line = usage(SERVE_FLAGS).split("\n").find((l) => l.trimStart().startsWith(`${flag} `) || l.trim() === flag);
    expect(line, flag).toBeDefined();
    expect(line).toContain(`[${variable}]`);
  });

  it("--help keeps every flag apart from its help, in one column", () => {
    const lines = usage(SERVE_FLAGS).split("\n");
    const helpStarts = lines.map((line) => {
      const flag = /^ {2}--\S+(?: <value>)?( {2,})\S/.exec(line);
      expect(flag, line).not.toBeNull();
      return flag![0].length - 1;
    });
    expect(new Set(helpStarts).size).toBe(1);
  });
});

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
