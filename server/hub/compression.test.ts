import { randomBytes } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { constants as zlib, inflateRawSync } from "node:zlib";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { COMPRESSION_THRESHOLD_BYTES } from "../contract/protocol.ts";
import type { SessionInfo } from "../contract/types.ts";
import { GLOBAL_PRINCIPAL } from "../http/credentials.ts";
import { startTestServer, type TestServer } from "../testing/test-server.ts";
import { RawWebSocket, type RawFrame } from "../testing/raw-websocket.ts";
import { waitFor } from "../testing/wait.ts";
import { WebSocketAcceptor } from "./accept.ts";
import { TextBroadcast } from "./text-broadcast.ts";

/**
 * Every WebSocket path of docs/protocol.md and docs/agent-api.md, `{id}` standing for a running session.
 * (/ws/s/{id} has its own compressed-resume test, the chat socket its compressed snapshot.)
 */
const ALL_PATHS = ["/ws/sessions", "/ws/settings", "/ws/s/{id}", "/ws/s/{id}/chat", "/ws/agent"];

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ openApi: true });
});
afterAll(async () => {
  await server?.stop();
});

/** Every client a test opens is gone after it, pass or fail, so no server waits on one at shutdown. */
const raws: RawWebSocket[] = [];
const sockets: WebSocket[] = [];
const track = (raw: RawWebSocket) => (raws.push(raw), raw);
afterEach(() => {
  for (const raw of raws.splice(0)) {
    for (const frame of raw.frames) {
      expect(frame.masked).toBe(false); // server frames are never masked
      expect(frame.fin).toBe(true); // every message of these endpoints is one final frame
    }
    raw.destroy();
  }
  for (const ws of sockets.splice(0)) ws.terminate();
});

/**
 * A raw client (the test sees the frames as they are on the wire: the RSV1 bit and the exact
 * payload bytes), offering permessage-deflate when asked.
 */
function openRaw(baseUrl: string, path: string, { offer, headers = {} }: { offer: boolean; headers?: Record<string, string> }): Promise<RawWebSocket> {
  const extension: Record<string, string> = offer ? { "Sec-WebSocket-Extensions": "permessage-deflate; client_max_window_bits" } : {};
  return RawWebSocket.open(baseUrl, path, { headers: { ...headers, ...extension } });
}

const auth = () => ({ authorization: `Bearer ${server.token}` });

/** The first message of a compressed stream has no history: it inflates on its own. */
function inflateFirst(frame: RawFrame): string {
  const withTail = Buffer.concat([frame.payload, Buffer.from([0x00, 0x00, 0xff, 0xff])]);
  return inflateRawSync(withTail, { finishFlush: zlib.Z_SYNC_FLUSH }).toString("utf8");
}

async function negotiated(path: string, perMessageDeflate: boolean): Promise<{ header: string | undefined; extensions: string }> {
  const ws = new WebSocket(server.url.replace(/^http/, "ws") + path, { headers: auth(), perMessageDeflate });
  sockets.push(ws);
  let headers: IncomingHttpHeaders = {};
  ws.once("upgrade", (res) => (headers = res.headers));
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  const extensions = ws.extensions;
  await new Promise<void>((resolve) => {
    ws.once("close", () => resolve());
    ws.close();
  });
  return { header: headers["sec-websocket-extensions"] as string | undefined, extensions };
}

describe("negotiation on every path", () => {
  /** a running session for the per-session paths, gone before the tests that count sessions */
  let sessionId: string;
  beforeAll(async () => {
    sessionId = (await server.createSession({ command: ["sh", "-c", "sleep 600"] })).id;
  });
  afterAll(async () => {
    await server.api(`/api/sessions/${sessionId}`, { method: "DELETE" });
  });

  describe.each(ALL_PATHS)("compression on %s", (template) => {
    it("is negotiated with compress=1 and an offer, and never without the parameter", async () => {
      const path = template.replace("{id}", sessionId);
      const on = await negotiated(`${path}?compress=1`, true);
      expect(on.header).toMatch(/^permessage-deflate\b/);
      expect(on.extensions).toMatch(/^permessage-deflate\b/);
      // Context takeover stays on: the server asks for neither no_context_takeover parameter.
      expect(on.header).not.toMatch(/no_context_takeover/);

      const off = await negotiated(path, true);
      expect(off.header).toBeUndefined();
      expect(off.extensions).toBe("");
      expect((await negotiated(`${path}?compress=0`, true)).header).toBeUndefined();
      expect((await negotiated(`${path}?compress=1`, false)).header).toBeUndefined();
    });
  });
});

describe("message sizes on the wire", () => {
  it("sends the small settings message uncompressed even when compression was negotiated", async () => {
    const raw = track(await openRaw(server.url, "/ws/settings?compress=1", { offer: true, headers: auth() }));
    expect(raw.status).toBe(101);
    expect(raw.headers["sec-websocket-extensions"]).toMatch(/^permessage-deflate/);
    await waitFor(() => raw.frames.length === 1, { message: "settings message" });
    const [frame] = raw.frames;
    expect(frame!.payload.length).toBeLessThan(COMPRESSION_THRESHOLD_BYTES);
    expect(frame!.rsv1).toBe(false);
    expect(JSON.parse(frame!.payload.toString("utf8"))).toEqual({ type: "settings", settings: await (await server.api("/api/settings")).json() });
  });

  it("compresses a large session list snapshot, which then reads exactly as the uncompressed one", async () => {
    for (let i = 0; i < 8; i++) await server.createSession({ command: ["sh", "-c", `echo session-${i}; exit 0`], title: `compressible ${i}` });
    // Wait until every session has exited with its final preview, so both snapshots describe the same state.
    const sessions = await waitFor(async () => {
      const { sessions } = (await (await server.api("/api/sessions")).json()) as { sessions: SessionInfo[] };
      return sessions.length >= 8 && sessions.every((s) => s.status === "exited" && s.preview.length > 0) ? sessions : null;
    });
    const packed = track(await openRaw(server.url, "/ws/sessions?compress=1", { offer: true, headers: auth() }));
    const plain = track(await openRaw(server.url, "/ws/sessions", { offer: true, headers: auth() }));
    expect(plain.headers["sec-websocket-extensions"]).toBeUndefined();
    await waitFor(() => packed.frames.length >= 1 && plain.frames.length >= 1, { message: "snapshots" });
    const text = plain.frames[0]!.payload.toString("utf8");
    expect(plain.frames[0]!.rsv1).toBe(false);
    expect(packed.frames[0]!.rsv1).toBe(true);
    expect(packed.frames[0]!.opcode).toBe(1); // still a text message
    expect(inflateFirst(packed.frames[0]!)).toBe(text);
    expect(JSON.parse(text)).toEqual({ type: "snapshot", sessions });
    expect(packed.frames[0]!.payload.length).toBeLessThan(text.length / 3);
    if (process.env.WEBMUX_REPORT_FIGURES) {
      console.info(`snapshot of ${sessions.length} sessions: ${Buffer.byteLength(text)} bytes plain, ${packed.frames[0]!.payload.length} compressed`);
    }
  });
});

describe("terminal stream compressed", () => {
  it("sends each /ws/s/{id} frame compressed exactly when it is 128 bytes or more, and the stream reads unchanged", async () => {
    const s = await server.createSession({ command: ["sh", "-c", "echo ready; exec cat"] });
    try {
      const raw = track(await openRaw(server.url, `/ws/s/${s.id}?compress=1&client=raw-compress-1`, { offer: true, headers: auth() }));
      expect(raw.headers["sec-websocket-extensions"]).toMatch(/^permessage-deflate/);
      const typed = "x".repeat(400);
      // Masked client frames: input typed into cat, which echoes it (a large output frame) and prints it again.
      const sendInput = (text: string) => {
        const payload = Buffer.concat([Buffer.from([0x00]), Buffer.from(text)]);
        const mask = randomBytes(4);
        const header = payload.length < 126 ? Buffer.from([0x82, 0x80 | payload.length]) : Buffer.from([0x82, 0x80 | 126, payload.length >> 8, payload.length & 0xff]);
        raw.socket.write(Buffer.concat([header, mask, Buffer.from(payload.map((b, i) => b ^ mask[i % 4]!))]));
      };
      await waitFor(() => raw.messages().some((m) => m[0] === 0x02), { message: "status frame" });
      sendInput("y\r");
      sendInput(typed + "\r");
      await waitFor(() => raw.messages().filter((m) => m[0] === 0x00).map((m) => m.subarray(1).toString()).join("").split(typed).length >= 3, { message: "echo and cat of the long line" });
      const messages = raw.messages();
      raw.frames.forEach((frame, i) => expect(frame.rsv1).toBe(messages[i]!.length >= COMPRESSION_THRESHOLD_BYTES));
      // Both kinds occur: small frames (position, the echo of "y") and large ones (status, the long line).
      expect(raw.frames.some((f) => f.rsv1)).toBe(true);
      // (On a busy machine the echo of "y" may leave coalesced with later output; the position frame stays small.)
      expect(raw.frames.some((f) => !f.rsv1)).toBe(true);
      expect(messages.map((m) => m[0])).toEqual(expect.arrayContaining([0x06, 0x04, 0x01, 0x02, 0x00]));
    } finally {
      await server.api(`/api/sessions/${s.id}`, { method: "DELETE" });
    }
  });
});

describe("live session list compressed", () => {
  it("compresses `created`, leaves the short `removed` plain, and reads exactly as an uncompressed client", async () => {
    const raw = track(await openRaw(server.url, "/ws/sessions?compress=1", { offer: true, headers: auth() }));
    const open = async (query: string) => {
      const ws = new WebSocket(server.url.replace(/^http/, "ws") + "/ws/sessions" + query, { headers: auth() });
      sockets.push(ws);
      const texts: string[] = [];
      ws.on("message", (data) => texts.push(data.toString()));
      await waitFor(() => texts.length > 0, { message: "snapshot" });
      return { ws, texts: () => texts };
    };
    const [packed, plain] = await Promise.all([open("?compress=1"), open("")]);
    expect(packed.ws.extensions).toMatch(/^permessage-deflate/);
    expect(plain.ws.extensions).toBe("");
    await waitFor(() => raw.frames.length > 0, { message: "raw snapshot" });
    const s = await server.createSession({ command: ["sh", "-c", "sleep 60"] });
    const deleted = await server.api(`/api/sessions/${s.id}`, { method: "DELETE" });
    expect(deleted.status).toBe(204);
    const removed = JSON.stringify({ type: "removed", id: s.id });
    const clients = [raw.texts.bind(raw), packed.texts, plain.texts];
    // Other sessions of this file may still send updates after it: `removed` need not be the last message.
    await waitFor(() => clients.every((texts) => texts().includes(removed)), { message: "removed seen by all" });
    const createdAt = (texts: string[]) => texts.findIndex((t) => t.includes(`"created"`) && t.includes(s.id));
    // From the session's `created` to its `removed`, all three saw the same messages (earlier ones may differ: they connected one by one).
    const between = (texts: string[]) => texts.slice(createdAt(texts), texts.indexOf(removed) + 1);
    const seen = clients.map((texts) => between(texts()));
    expect(seen[0]!.length).toBeGreaterThanOrEqual(2);
    expect(seen[1]).toEqual(seen[0]);
    expect(seen[2]).toEqual(seen[0]);
    // On the wire each message is compressed exactly when it is 128 bytes or more.
    const texts = raw.texts();
    raw.frames.forEach((frame, i) => expect(frame.rsv1).toBe(Buffer.byteLength(texts[i]!) >= COMPRESSION_THRESHOLD_BYTES));
    expect(raw.frames[texts.indexOf(removed)]!.rsv1).toBe(false);
    expect(raw.frames[createdAt(texts)]!.rsv1).toBe(true);
  });
});

describe("TextBroadcast over the acceptor", () => {
  let http: Server;
  let base: string;
  /** What each connection is sent right after it opens: the first as its snapshot, the rest broadcast. */
  const messages = ["a".repeat(COMPRESSION_THRESHOLD_BYTES - 1), "b".repeat(COMPRESSION_THRESHOLD_BYTES), "c".repeat(64 * 1024), "d".repeat(COMPRESSION_THRESHOLD_BYTES - 1)];
  beforeAll(async () => {
    const acceptor = new WebSocketAcceptor();
    http = createServer();
    http.on("upgrade", (req, socket, head) => {
      acceptor.accept(req, socket, head, new URL(req.url ?? "/", "http://localhost"), GLOBAL_PRINCIPAL, (ws) => {
        if (req.url?.startsWith("/bare")) {
          // An endpoint that just calls ws.send (as /ws/agent and the chat socket do).
          for (const m of messages) ws.send(m);
          return;
        }
        const one = new TextBroadcast();
        one.add(ws, messages[0]!);
        for (const m of messages.slice(1)) one.send(m);
      });
    });
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => http.close(() => resolve()));
  });

  it("leaves a 127-byte message uncompressed and compresses 128 bytes and more", async () => {
    const raw = track(await openRaw(base, "/x?compress=1", { offer: true }));
    await waitFor(() => raw.frames.length === messages.length, { message: "all messages" });
    expect(raw.frames.map((f) => f.rsv1)).toEqual([false, true, true, false]);
    expect(raw.frames[0]!.payload.toString()).toBe(messages[0]);
    expect(raw.frames[3]!.payload.toString()).toBe(messages[3]);
    expect(raw.frames[2]!.payload.length).toBeLessThan(1024);

    const plain = track(await openRaw(base, "/x", { offer: true }));
    await waitFor(() => plain.frames.length === messages.length, { message: "all plain messages" });
    expect(plain.frames.map((f) => f.rsv1)).toEqual([false, false, false, false]);
    expect(plain.frames.map((f) => f.payload.toString())).toEqual(messages);
    expect(raw.frameBytes).toBeLessThan(plain.frameBytes / 10);
  });

  it("applies the 128-byte rule to every endpoint's plain ws.send, not only the broadcasts", async () => {
    const raw = track(await openRaw(base, "/bare?compress=1", { offer: true }));
    await waitFor(() => raw.frames.length === messages.length, { message: "all messages" });
    expect(raw.frames.map((f) => f.rsv1)).toEqual([false, true, true, false]);
    expect(raw.frames[0]!.payload.toString()).toBe(messages[0]);
  });

  it("mixes compressed and plain messages in one context-takeover stream that a ws client reads unchanged", async () => {
    const ws = new WebSocket(base.replace(/^http/, "ws") + "/x?compress=1");
    sockets.push(ws);
    const texts: string[] = [];
    ws.on("message", (data) => texts.push(data.toString()));
    await waitFor(() => texts.length === messages.length, { message: "all messages" });
    expect(ws.extensions).toMatch(/^permessage-deflate/);
    expect(texts).toEqual(messages);
  });
});
