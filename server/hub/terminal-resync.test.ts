import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CloseCode } from "../contract/protocol.ts";
import { Session } from "../session/session.ts";
import { TerminalClient } from "../testing/terminal-client.ts";
import { startTestServer, TEST_SHELL_COMMAND, type TestServer } from "../testing/test-server.ts";
import { waitFor } from "../testing/wait.ts";

let server: TestServer;
beforeAll(async () => {
  // A small ring, so a few thousand lines truncate it and a replay must wait for the headless screen.
  server = await startTestServer({ bufferBytes: 64 * 1024 });
});
afterAll(async () => {
  await server?.stop();
});

const connect = (id: string, client: string) => TerminalClient.connect(server.url, id, { token: server.token, client, label: client });
const roundTrip = (c: TerminalClient) => c.roundTrip();

/**
 * A running program whose ring has wrapped, with the headless screen's serialization held back
 * until `release()`: the replay of a truncated ring stays in preparation as long as the test wants.
 */
async function truncatedSession(script: string): Promise<{ session: Session; release: () => void }> {
  const info = await server.createSession({ command: ["bash", "--norc", "--noprofile", "-c", `stty raw -echo; seq 1 30000; echo; echo READY; ${script}`] });
  const session = server.registry.get(info.id)!;
  await waitFor(() => session.stats().truncated && Buffer.from(session.readOutput(session.stats().end - 7)).includes("READY"), { message: "ring wrapped" });
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const mirror = Session.mirrorForFaultTests(session);
  const serialize = mirror.serialize.bind(mirror);
  mirror.serialize = (opts) => gate.then(() => serialize(opts));
  return { session, release };
}

describe("resync (0x02)", () => {
  it("answers with control, a reset position, a snapshot and status, in that order", async () => {
    const s = await server.createSession({ command: [...TEST_SHELL_COMMAND, "-i"], env: { PS1: "$ " } });
    const c = await connect(s.id, "resync-plain");
    await c.waitForText("$ ");
    c.type("echo resync-$((6*7))\r");
    await c.waitForText("resync-42\r\n");
    const before = c.frames.length;
    c.resync();
    await c.waitForFrames((f) => f.slice(before).some((x) => x.type === "status"));
    expect(c.types().slice(before, before + 4)).toEqual(["control", "position", "snapshot", "status"]);
    expect(c.position).toMatchObject({ generation: s.generation, mode: "reset", start: 0, truncated: false });
    expect(c.snapshots.at(-1)!.toString()).toContain("resync-42");
    await c.close();
  });

  it("during a truncated replay: resyncs wait for it and become one replay after it; held 0x05 frames follow its status", async () => {
    const { session, release } = await truncatedSession("exec cat > /dev/null");
    const c = await connect(session.id, "resync-held");
    await c.waitForFrames((f) => f.some((x) => x.type === "position"));
    expect(c.types()).toEqual(["control", "position"]);
    expect(c.position).toMatchObject({ mode: "reset", truncated: true });
    // Its statuses are held with the replay: nothing reaches the client yet.
    c.submit("resync-held-sub1", "x", "\r");
    await waitFor(() => session.submissions.get("resync-held-sub1")?.state === "written", { message: "submission written" });
    // docs/design.md, Back-pressure: a replay in flight is not overtaken; resyncs meanwhile coalesce.
    for (let i = 0; i < 5; i++) c.resync();
    await roundTrip(c);
    expect(c.types()).toEqual(["control", "position"]);
    release();
    await c.waitForFrames((f) => f.filter((x) => x.type === "status").length === 2);
    await roundTrip(c);
    expect(c.types()).toEqual(["control", "position", "snapshot", "status", "submitStatus", "submitStatus", "control", "position", "snapshot", "status"]);
    expect(c.submitStatuses).toEqual([
      { id: "resync-held-sub1", state: "received" },
      { id: "resync-held-sub1", state: "written" },
    ]);
    expect(c.position).toMatchObject({ mode: "reset", truncated: true, start: session.stats().end });
    await c.close();
  });

  it("a program exiting during a truncated replay still gets snapshot, its last output, status and exit before 4410", async () => {
    const { session, release } = await truncatedSession("head -c 1 > /dev/null; printf LAST-WORDS; exit 4");
    const c = await connect(session.id, "exit-held");
    await c.waitForFrames((f) => f.some((x) => x.type === "position"));
    c.type("q"); // the program reads one byte, prints, exits
    await waitFor(() => session.status === "exited", { message: "program exited" });
    release();
    expect(await c.closed()).toBe(CloseCode.EXITED);
    const types = c.types();
    expect(types.slice(0, 4)).toEqual(["control", "position", "snapshot", "status"]);
    expect(types.at(-1)).toBe("exit");
    expect(c.exitCode).toBe(4);
    expect(c.text).toContain("LAST-WORDS");
    expect(types.lastIndexOf("output")).toBeLessThan(types.indexOf("exit"));
  });
});
