import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { CloseCode } from "../contract/protocol.ts";
import { TerminalClient } from "../testing/terminal-client.ts";
import { startTestServer, TEST_SHELL_COMMAND, type TestServer } from "../testing/test-server.ts";
import { waitFor } from "../testing/wait.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.stop();
});

const SHELL_ENV = { PS1: "$ " };
/** `marker` followed by a fresh prompt at the very end (bash may turn bracketed paste on before it). */
const promptAfter = (marker: string) => new RegExp(`${marker}\\r\\n(?:\\x1b\\[\\?2004h)?\\$ $`);
const connect = (id: string, options: ConstructorParameters<typeof TerminalClient>[2] = {}) =>
  TerminalClient.connect(server.url, id, { token: server.token, ...options });

async function shell(extra: Record<string, unknown> = {}) {
  return server.createSession({ command: [...TEST_SHELL_COMMAND, "-i"], env: SHELL_ENV, ...extra });
}

describe("attach and replay", () => {
  it("sends control, position, snapshot, status in that order on a fresh attach, then live output", async () => {
    const s = await shell();
    const a = await connect(s.id, { client: "client-aaaa" });
    await a.waitForFrames((f) => f.some((x) => x.type === "status"));
    expect(a.types().slice(0, 4)).toEqual(["control", "position", "snapshot", "status"]);
    expect(a.position).toMatchObject({ generation: s.generation, mode: "reset", start: 0, truncated: false });
    a.type("echo live-$((6*7))\r");
    await a.waitForText("live-42");
    // the offset is the snapshot's end plus every output byte after it
    expect(a.offset).toBe(a.position!.end + a.output.length);
    await a.close();
  });

  it("resumes with append and exactly the missing bytes, compared with a client that stayed", async () => {
    const s = await shell();
    const stayer = await connect(s.id, { client: "stayer-1" });
    await stayer.waitForText("$ ");
    stayer.type("echo before\r");
    await stayer.waitForText(promptAfter("before"));
    const leaver = await connect(s.id, { client: "leaver-1" });
    await leaver.waitForFrames((f) => f.some((x) => x.type === "status"));
    await waitFor(() => leaver.offset === stayer.offset);
    const resume = { generation: leaver.generation!, offset: leaver.offset };
    await leaver.close();
    stayer.type("for i in $(seq 1 500); do echo missed-$i; done\r");
    await stayer.waitForText(promptAfter("missed-500"));
    const back = await connect(s.id, { client: "leaver-1", resume });
    await back.waitForFrames((f) => f.some((x) => x.type === "status"));
    expect(back.position).toMatchObject({ mode: "append", start: resume.offset, end: stayer.offset });
    const stayed = Buffer.concat(stayer.allOutput);
    const missing = stayed.subarray(stayed.length - (stayer.offset - resume.offset));
    expect(back.output.equals(missing)).toBe(true);
    expect(back.types().slice(0, 4)).toEqual(["control", "position", "output", "status"]);
    await back.close();
    await stayer.close();
  });

  it("resumes with append and no output frame when nothing was missed", async () => {
    const s = await server.createSession({ command: [...TEST_SHELL_COMMAND, "-c", "echo quiet; sleep 100"] });
    const a = await connect(s.id);
    await a.waitForText("quiet");
    const resume = { generation: a.generation!, offset: a.offset };
    await a.close();
    const b = await connect(s.id, { resume });
    await b.waitForFrames((f) => f.some((x) => x.type === "status"));
    expect(b.types()).toEqual(["control", "position", "status"]);
    expect(b.position).toMatchObject({ mode: "append", start: resume.offset, end: resume.offset });
    await b.close();
  });

  it("falls back to a full replay for bad, unknown or previous-run generations and bad offsets", async () => {
    const s = await server.createSession({ command: [...TEST_SHELL_COMMAND, "-c", "echo replay-me; sleep 100"] });
    const first = await connect(s.id);
    await first.waitForText("replay-me");
    const end = first.offset;
    await first.close();
    const cases: Record<string, string>[] = [
      { generation: "not-this-one", offset: "0" },
      { generation: `previousboot.1`, offset: "5" },
      { generation: s.generation, offset: String(end + 1) },
      { generation: s.generation, offset: "-1" },
      { generation: s.generation, offset: "1e3" },
      { generation: s.generation, offset: "0x10" },
      { generation: s.generation, offset: "" },
      { generation: "", offset: "3" },
    ];
    for (const query of cases) {
      const c = await connect(s.id, { query });
      await c.waitForFrames((f) => f.some((x) => x.type === "status"));
      expect(c.position, JSON.stringify(query)).toMatchObject({ mode: "reset", start: 0, end, truncated: false });
      expect(c.snapshots[0]!.toString()).toContain("replay-me");
      await c.close();
    }
  });

  it("resumes a compressed stream with exact offsets", async () => {
    const s = await shell();
    const query = { compress: "1" };
    const stayer = await connect(s.id, { client: "zip-stayer", query });
    expect(stayer.ws.extensions).toContain("permessage-deflate");
    await stayer.waitForText("$ ");
    const leaver = await connect(s.id, { client: "zip-leaver", query });
    await leaver.waitForFrames((f) => f.some((x) => x.type === "status"));
    await waitFor(() => leaver.offset === stayer.offset);
    const resume = { generation: leaver.generation!, offset: leaver.offset };
    await leaver.close();
    stayer.type("for i in $(seq 1 3000); do echo compressed-line-$i; done\r");
    await stayer.waitForText(promptAfter("compressed-line-3000"));
    const back = await connect(s.id, { client: "zip-leaver", resume, query });
    await back.waitForFrames((f) => f.some((x) => x.type === "status"));
    expect(back.position).toMatchObject({ mode: "append", start: resume.offset, end: stayer.offset });
    const stayed = Buffer.concat(stayer.allOutput);
    expect(back.output.equals(stayed.subarray(stayed.length - (stayer.offset - resume.offset)))).toBe(true);
    // compression worked: far fewer bytes read from the socket than the payload
    const socketBytes = (back.ws as unknown as { _socket: { bytesRead: number } })._socket.bytesRead;
    expect(socketBytes).toBeLessThan(back.output.length / 2);
    await back.close();
    await stayer.close();
  });

  it("answers a resume after the ring wrapped with reset, truncated, start == end", async () => {
    const small = await startTestServer({ bufferBytes: 64 * 1024 });
    try {
      const s = await small.createSession({ command: [...TEST_SHELL_COMMAND, "-i"], env: SHELL_ENV });
      const a = await TerminalClient.connect(small.url, s.id, { token: small.token });
      await a.waitForText("$ ");
      const resume = { generation: a.generation!, offset: a.offset };
      await a.close();
      const writer = await TerminalClient.connect(small.url, s.id, { token: small.token });
      writer.type("seq 1 100000; echo wrapped-done\r");
      await writer.waitForText(promptAfter("wrapped-done"), 20_000);
      const endBefore = writer.offset;
      const b = await TerminalClient.connect(small.url, s.id, { token: small.token, resume });
      await b.waitForFrames((f) => f.some((x) => x.type === "status"));
      expect(b.position!.mode).toBe("reset");
      expect(b.position!.truncated).toBe(true);
      expect(b.position!.start).toBe(b.position!.end);
      // (the redraw request after this reset makes bash repaint its prompt, so later bytes may follow)
      expect(b.position!.end).toBe(endBefore);
      await b.close();
      await writer.close();
    } finally {
      await small.stop();
    }
  });

  it("delivers 200 000 numbered lines exactly once and in order while a client keeps dropping and resuming", async () => {
    const s = await server.createSession({ command: [...TEST_SHELL_COMMAND, "-c", "sleep 0.3; seq 1 200000; echo ALL-DONE; sleep 100"] });
    let resume: { generation: string; offset: number } | undefined;
    const received: Buffer[] = [];
    let connections = 0;
    for (;;) {
      const c = await connect(s.id, { client: "dropper-1", resume });
      connections++;
      await c.waitForFrames((f) => f.some((x) => x.type === "status"));
      if (!resume) received.push(c.snapshots[0] ?? Buffer.alloc(0));
      else expect(c.position!.mode).toBe("append");
      // take some output, then drop
      const target = c.offset + 200_000;
      await waitFor(() => c.offset >= target || c.shownText.includes("ALL-DONE"), { timeout: 20_000 });
      await c.close();
      received.push(c.output);
      resume = { generation: c.generation!, offset: c.offset };
      if (Buffer.concat(received).includes("ALL-DONE")) break;
      expect(connections).toBeLessThan(200);
    }
    const text = Buffer.concat(received).toString().replace(/\r\n/g, "\n");
    const lines = text.split("\n").filter((l) => /^\d+$/.test(l));
    expect(lines.length).toBe(200000);
    lines.forEach((l, i) => {
      if (Number(l) !== i + 1) throw new Error(`line ${i} is ${l}`);
    });
    expect(connections).toBeGreaterThan(3);
  }, 60_000);
});

describe("close codes and hostile input", () => {
  it("closes 4404 for an unknown session and 401 before the upgrade without a credential", async () => {
    const c = await connect("nosuchid");
    expect(await c.closed()).toBe(CloseCode.NOT_FOUND);
    await expect(TerminalClient.connect(server.url, "nosuchid")).rejects.toThrow(/401/);
    await expect(TerminalClient.connect(server.url, "nosuchid", { token: "wrong-token-wrong-token" })).rejects.toThrow(/401/);
  });

  it("replays an exited session: snapshot, status, exit frame, then close 4410", async () => {
    const s = await server.createSession({ command: ["sh", "-c", "echo last words; exit 3"] });
    await waitFor(async () => ((await (await server.api(`/api/sessions/${s.id}`)).json()) as { status: string }).status === "exited");
    const c = await connect(s.id);
    expect(await c.closed()).toBe(CloseCode.EXITED);
    expect(c.types()).toEqual(["control", "position", "snapshot", "status", "exit"]);
    expect(c.exitCode).toBe(3);
    expect(c.snapshots[0]!.toString()).toContain("last words");
  });

  it("sends status and exit then 4410 to clients attached when the program exits", async () => {
    const s = await shell();
    const clients = await Promise.all([connect(s.id), connect(s.id), connect(s.id)]);
    for (const c of clients) await c.waitForText("$ ");
    clients[0]!.type("exit 9\r");
    for (const c of clients) {
      expect(await c.closed()).toBe(CloseCode.EXITED);
      expect(c.exitCode).toBe(9);
      expect(c.types().slice(-2)).toEqual(["status", "exit"]);
    }
  });

  it("closes viewers of a deleted session with 4404 \"session deleted\", not with the hang-up's exit status", async () => {
    const s = await shell();
    const clients = await Promise.all([connect(s.id), connect(s.id)]);
    for (const c of clients) await c.waitForText("$ ");
    expect((await server.api(`/api/sessions/${s.id}`, { method: "DELETE" })).status).toBe(204);
    for (const c of clients) {
      expect(await c.closed()).toBe(CloseCode.NOT_FOUND);
      expect(c.closeReason).toBe("session deleted");
      expect(c.types()).not.toContain("exit");
    }
  });

  it("survives random bytes as client frames; the session and other clients carry on", async () => {
    const s = await shell();
    const good = await connect(s.id, { client: "good-client" });
    await good.waitForText("$ ");
    const bad = new WebSocket(`${server.url.replace("http", "ws")}/ws/s/${s.id}?client=bad-client`, { headers: { authorization: `Bearer ${server.token}` } });
    await new Promise((r) => bad.once("open", r));
    let seed = 12345;
    const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
    for (let i = 0; i < 2000; i++) {
      const len = Math.floor(rand() * 64);
      const frame = Buffer.alloc(len);
      for (let j = 0; j < len; j++) frame[j] = Math.floor(rand() * 256);
      // never an input/auto-reply frame: those are valid by definition and would type into the shell
      if (frame.length > 0 && (frame[0] === 0x00 || frame[0] === 0x06)) frame[0] = 0x07;
      bad.send(frame);
    }
    bad.send("text frames are ignored");
    bad.send(Buffer.from([0x01, ...Buffer.from('{"cols":"wide","rows":-1}')]));
    bad.send(Buffer.from([0x03, ...Buffer.from('{"id":"short","generation":1}\n')]));
    await new Promise<void>((resolve) => bad.ping(undefined, undefined, () => resolve()));
    good.type("echo still-alive\r");
    await good.waitForText("still-alive");
    bad.close();
    await good.close();
  });

  it("closes only the connection whose frame cannot be encoded (1011); the session goes on", async () => {
    const s = await shell();
    const session = server.registry.get(s.id)!;
    const healthy = await connect(s.id, { client: "healthy-1" });
    await healthy.waitForText("$ ");
    const realInfo = session.info.bind(session);
    session.info = () => ({ ...realInfo(), pid: -5 }); // breaks the contract: a pid is positive or null
    const broken = await connect(s.id, { client: "broken-1" });
    expect(await broken.closed()).toBe(CloseCode.INTERNAL);
    session.info = realInfo;
    healthy.type("echo after-1011\r");
    await healthy.waitForText("after-1011");
    expect(session.status).toBe("running");
    await healthy.close();
  });

  it("closes a connection that sends an oversize frame, without buffering it", async () => {
    const s = await server.createSession({ command: ["sleep", "100"] });
    const c = await connect(s.id);
    c.send(new Uint8Array(2 * 1024 * 1024));
    expect(await c.closed()).toBe(1009);
  });
});
