import { describe, expect, it } from "vitest";
import { encodeTerminalQuery, readTerminalQuery, REPLAY_ACK_PARAM, terminalStreamPath } from "./terminal-query.ts";

describe("the /ws/s/{id} query", () => {
  it("encodes every parameter in a fixed order, leaving out what is absent", () => {
    expect(encodeTerminalQuery({})).toBe("");
    expect(encodeTerminalQuery({ client: "tab-0123456789", label: "", resume: null })).toBe("client=tab-0123456789");
    expect(encodeTerminalQuery({ client: "c-12345678", label: "Chrome on Linux", resume: { generation: "boot.3", offset: 5_242_880 }, history: false, compress: true, replayAck: true })).toBe(
      "client=c-12345678&label=Chrome%20on%20Linux&generation=boot.3&offset=5242880&history=0&compress=1&replayAck=1",
    );
  });

  it("puts the session ID into the path, encoded", () => {
    expect(terminalStreamPath("abcd1234", { replayAck: true })).toBe(`/ws/s/abcd1234?${REPLAY_ACK_PARAM}=1`);
    expect(terminalStreamPath("a/b", {})).toBe("/ws/s/a%2Fb");
  });

  it("reads back what it encodes", () => {
    const request = { client: "tab-0123456789", label: "Pixel 8 · Chrome", resume: { generation: "k3v9.2", offset: 17 }, history: false, replayAck: true };
    expect(readTerminalQuery(new URLSearchParams(encodeTerminalQuery(request)))).toEqual({
      clientId: "tab-0123456789",
      label: "Pixel 8 · Chrome",
      resume: { generation: "k3v9.2", offset: 17 },
      history: false,
      replayAck: true,
    });
  });

  it("ignores malformed parameters: no client ID, no resume point unless both halves are valid", () => {
    expect(readTerminalQuery(new URLSearchParams("client=%00&generation=g.1&offset=-1&history=1&replayAck=yes"))).toEqual({
      clientId: null,
      label: "",
      resume: null,
      history: true,
      replayAck: false,
    });
    expect(readTerminalQuery(new URLSearchParams("offset=12")).resume).toBeNull();
  });
});
