import { describe, expect, it } from "vitest";
import { terminalSocketUrl } from "./connection.ts";

describe("terminalSocketUrl", () => {
  it("carries the tab's client ID, its label and the resume point (docs/protocol.md § Query parameters: client, label, generation, offset), and that it acknowledges replays", () => {
    const url = new URL(terminalSocketUrl({ sessionId: "abcd1234", clientId: "tab-0123456789" }, "Chrome on Linux", { generation: "boot.3", offset: 5_242_880 }, "http://127.0.0.1:8999/s/abcd1234"));
    expect(`${url.protocol}//${url.host}${url.pathname}`).toBe("ws://127.0.0.1:8999/ws/s/abcd1234");
    expect(Object.fromEntries(url.searchParams)).toEqual({ client: "tab-0123456789", label: "Chrome on Linux", generation: "boot.3", offset: "5242880", replayAck: "1" });
  });

  it("asks for a full replay without a resume point, leaves out an empty label, and uses wss with compress=1 on https", () => {
    const url = new URL(terminalSocketUrl({ sessionId: "abcd1234", clientId: "tab-0123456789", compress: true }, "", null, "https://host.example/s/abcd1234"));
    expect(url.protocol).toBe("wss:");
    expect(Object.fromEntries(url.searchParams)).toEqual({ client: "tab-0123456789", compress: "1", replayAck: "1" });
  });
});
