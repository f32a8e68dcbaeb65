/**
 * docs/design.md, Device queries and auto-replies: a replay that contains device queries must not
 * get them answered again. The server's half: it ignores a connection's 0x06 until that
 * connection's replay is finished (docs/protocol.md, Client → server frames).
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeReplayParsed } from "../contract/frames.ts";
import { TerminalClient } from "../testing/terminal-client.ts";
import { startTestServer, type TestServer } from "../testing/test-server.ts";
import { waitFor } from "../testing/wait.ts";

const RECORDER = join(dirname(fileURLToPath(import.meta.url)), "..", "testing", "tui", "query-recorder.mjs");
const hex = (s: string) => Buffer.from(s, "latin1").toString("hex");
/** What a terminal would answer to the recorder's queries (any bytes would do: the server cannot tell). */
const STALE_ANSWERS = ["\x1b[12;1R", "\x1b[0n", "\x1b[?62;22c", "\x1b[>0;276;0c", "\x1b[?2004;2$y", "\x1b]11;rgb:0000/0000/0000\x1b\\"];

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.stop();
});

/** A session whose ring holds the recorder's queries, asked while no client was attached. */
async function askedSession() {
  const info = await server.createSession({ command: [process.execPath, RECORDER] });
  const session = server.registry.get(info.id)!;
  await waitFor(() => Buffer.from(session.readOutput()).includes("QUERIES-ASKED-1"), { message: "queries asked" });
  return { info, session };
}

/** Every read the program reported, as hex. */
function received(client: TerminalClient): string[] {
  return [...client.shownText.matchAll(/got:([0-9a-f]+)/g)].map((m) => m[1]!);
}

describe("auto-replies during a replay", () => {
  it("are ignored until a client with replayAck=1 says it parsed the replay; afterwards they reach the program", async () => {
    const { info } = await askedSession();
    const client = new TerminalClient(server.url, info.id, { token: server.token, client: "acking-client", query: { replayAck: "1" } });
    // Answers as soon as the replay starts, and again once it has all of it: both are stale.
    await client.waitForFrames((f) => f.some((x) => x.type === "position"));
    for (const answer of STALE_ANSWERS) client.autoReply(answer);
    await client.waitForFrames((f) => f.some((x) => x.type === "status"));
    expect(client.shownText).toContain("QUERIES-ASKED-1");
    for (const answer of STALE_ANSWERS) client.autoReply(answer);
    await client.roundTrip();
    expect(server.registry.get(info.id)!.info().controller?.clientId).toBe("acking-client");
    // Parsed: from now on its answers are to live queries.
    client.send(encodeReplayParsed());
    client.autoReply("LIVE-ANSWER");
    await client.waitForText("got:");
    await client.roundTrip();
    client.type("END");
    await client.waitForText(`got:${hex("END")}`);
    expect(received(client)).toEqual([hex("LIVE-ANSWER"), hex("END")]);
    await client.close();
  });

  it("are ignored again during a resync's replay until that one is acknowledged too", async () => {
    const { info } = await askedSession();
    const client = await TerminalClient.connect(server.url, info.id, { token: server.token, query: { replayAck: "1" } });
    await client.waitForFrames((f) => f.some((x) => x.type === "status"));
    client.send(encodeReplayParsed());
    client.resync();
    await client.waitForFrames((f) => f.filter((x) => x.type === "status").length === 2);
    // The first acknowledgement does not count for the second replay.
    client.autoReply("STALE");
    client.send(encodeReplayParsed());
    client.autoReply("LIVE");
    // (one read each: the program would show bytes that arrive together as one line)
    await client.waitForText("got:");
    client.type("END");
    await client.waitForText(`got:${hex("END")}`);
    expect(received(client)).toEqual([hex("LIVE"), hex("END")]);
    await client.close();
  });

  it("from a client that never acknowledges (replayAck absent) reach the program once its replay has been sent", async () => {
    const { info } = await askedSession();
    const client = await TerminalClient.connect(server.url, info.id, { token: server.token });
    await client.waitForFrames((f) => f.some((x) => x.type === "status"));
    await client.roundTrip();
    client.autoReply("OLD-CLIENT-ANSWER");
    await client.waitForText(`got:${hex("OLD-CLIENT-ANSWER")}`);
    expect(received(client)).toEqual([hex("OLD-CLIENT-ANSWER")]);
    await client.close();
  });
});
