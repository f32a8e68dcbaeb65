import fc from "fast-check";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ClientFrame,
  decodeClientFrame,
  encodeClientMessage,
  encodeQuerySubmissions,
  encodeResize,
  encodeSubmit,
  type ClientMessage,
} from "../contract/frames.ts";
import { MAX_CLIENT_FRAME_BYTES } from "../contract/protocol.ts";
import type { SessionInfo } from "../contract/types.ts";
import { DEFAULT_MAX_CONNECTIONS_PER_ADDRESS } from "../hub/connection-limit.ts";
import { DEFAULT_MAX_HTTP_CONNECTIONS_PER_ADDRESS } from "../http/http-limits.ts";
import type { Session } from "../session/session.ts";
import { TerminalClient } from "../testing/terminal-client.ts";
import { startTestServer, type TestServer } from "../testing/test-server.ts";
import { waitFor } from "../testing/wait.ts";
import { fetchDebugStats } from "../testing/debug-stats.ts";
import { Opcode, RawWebSocket } from "../testing/raw-websocket.ts";
import { startServerProcess, type ServerProcess } from "../testing/webmux-process.ts";
import { HEX_READER } from "../testing/stream-check.ts";

/** Fixed seed: the same frames every run, so a failure can be replayed. */
const SEED = 0x5eed;
/** Hostile frames sent to one session: every opcode and reader branch many times over. */
const FUZZ_FRAMES = 3000;
/** JSON bodies thrown at each HTTP route. */
const FUZZ_BODIES = 150;
/** Handshakes in the burst (docs/design.md § Hardening and limits). */
const BURST = 10_000;
/** Handshakes in flight at once during the burst: a flood, within this process's file descriptors. */
const BURST_WINDOW = 500;
/** An API request must be answered within this during the burst for the server to count as responsive. */
const RESPONSIVE_MS = 2_000;


let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.stop();
});

/** Frames a hostile or broken client might send: random bytes, valid messages, mutated valid frames, JSON junk. */
function hostileFrames(generation: string): Uint8Array[] {
  const real = [
    encodeResize({ cols: 100, rows: 30 }),
    encodeQuerySubmissions({ ids: ["query-id-0001", "query-id-0002"] }),
    encodeSubmit({ id: "fuzzed-sub-0001", generation }, "echo hi", "\r"),
  ];
  const mutate = fc.tuple(fc.constantFrom(...real), fc.array(fc.tuple(fc.nat(), fc.nat({ max: 255 }), fc.constantFrom("flip", "cut", "insert")), { minLength: 1, maxLength: 4 })).map(
    ([frame, edits]) => {
      let out = Buffer.from(frame);
      for (const [where, value, edit] of edits) {
        const at = where % Math.max(1, out.length);
        if (edit === "flip") out[at] = value;
        else if (edit === "cut") out = out.subarray(0, at);
        else out = Buffer.concat([out.subarray(0, at), Buffer.from([value]), out.subarray(at)]);
      }
      return new Uint8Array(out);
    },
  );
  const jsonBehind = fc
    .tuple(fc.constantFrom(ClientFrame.RESIZE, ClientFrame.QUERY_SUBMISSIONS, ClientFrame.SUBMIT, ClientFrame.RESYNC, ClientFrame.TAKE_CONTROL), fc.json())
    .map(([op, json]) => new Uint8Array(Buffer.concat([Buffer.from([op]), Buffer.from(op === ClientFrame.SUBMIT ? `${json}\n` : json)])));
  const message: fc.Arbitrary<ClientMessage> = fc.oneof(
    fc.record({ cols: fc.integer({ min: -5, max: 1200 }), rows: fc.integer({ min: -5, max: 1200 }) }).map((s) => ({ type: "resize" as const, ...s })),
    fc.constant({ type: "resync" as const }),
    fc.constant({ type: "takeControl" as const }),
    fc.array(fc.string({ maxLength: 70 }), { maxLength: 70 }).map((ids) => ({ type: "querySubmissions" as const, ids })),
    fc.record({ id: fc.string({ maxLength: 70 }), generation: fc.string({ maxLength: 130 }), body: fc.uint8Array({ maxLength: 64 }) }).map(({ id, generation, body }) => ({
      type: "submit" as const,
      header: { id, generation, bodyBytes: body.length },
      body,
      submitKey: new Uint8Array([13]),
    })),
  );
  const valid = message.map((m) => {
    try {
      return encodeClientMessage(m);
    } catch {
      return new Uint8Array([0xff]); // a message its own encoder refuses is a junk frame
    }
  });
  const arbitrary = fc.oneof(fc.uint8Array({ maxLength: 96 }), valid, mutate, jsonBehind);
  return fc.sample(arbitrary, { seed: SEED, numRuns: FUZZ_FRAMES });
}

/** Whether the server may write this frame to the PTY: typed input or auto-replies, or a submission for the current run. */
function mayWrite(frame: Uint8Array, generation: string): boolean {
  const m = decodeClientFrame(frame);
  return m.type === "input" || m.type === "autoReply" || (m.type === "submit" && m.header.generation === generation);
}

describe("hostile frames", () => {
  let session: Session;
  beforeAll(() => {
    session = server.registry.create({ command: ["sh", "-c", HEX_READER], cols: 80, rows: 24 });
  });

  it("never reach the PTY unless valid, never crash the server, and get a defined answer or silence", async () => {
    const watcher = await TerminalClient.connect(server.url, session.id, { token: server.token, client: "watcher-0001" });
    await watcher.waitForText("READY");
    const fuzzer = await TerminalClient.connect(server.url, session.id, { token: server.token, client: "fuzzer-0001" });
    await waitFor(() => fuzzer.status, { message: "fuzzer attached" });
    fuzzer.takeControl();
    const frames = hostileFrames(session.generation).filter((f) => !mayWrite(f, session.generation));
    expect(frames.length).toBeGreaterThan(FUZZ_FRAMES * 0.9);
    for (const frame of frames) fuzzer.send(frame);
    fuzzer.send(encodeQuerySubmissions({ ids: ["fuzz-end-marker"] }));
    await waitFor(() => fuzzer.submitStatuses.some((s) => s.id === "fuzz-end-marker"), { timeout: 20_000, message: "every frame handled" });
    // Only what the watcher types now reaches the program: it is the first thing the program reads.
    watcher.type("Z");
    await watcher.waitForText("GOT:5a");
    expect([...watcher.text.matchAll(/GOT:([0-9a-f]*)/g)].map((m) => m[1]).join("")).toBe("5a");
    // The fuzzer heard only defined answers (the test client throws on any undecodable frame): replays, control, statuses.
    for (const type of new Set(fuzzer.types())) expect(["control", "position", "snapshot", "output", "status", "submitStatus"]).toContain(type);
    for (const status of fuzzer.submitStatuses) expect(["received", "written", "partial", "failed", "missing"]).toContain(status.state);
    expect(fuzzer.closeCode).toBeNull();
    expect(session.status).toBe("running");
    await fuzzer.close();
    await watcher.close();
  }, 30_000);

  it("oversize frames are refused with 1009 as soon as their header says so, not buffered", async () => {
    for (const path of [`/ws/s/${session.id}`, "/ws/sessions"]) {
      // A header announcing one byte too many and no payload at all: the server cannot be waiting for it.
      const announced = await RawWebSocket.open(server.url, path, { headers: { authorization: `Bearer ${server.token}` } });
      expect(announced.status).toBe(101);
      await announced.write(RawWebSocket.frame(Opcode.BINARY, new Uint8Array(0), { announce: MAX_CLIENT_FRAME_BYTES + 1 }));
      await waitFor(() => announced.closeCode, { message: `close after an oversize header on ${path}` });
      expect(announced.closeCode).toBe(1009);
      announced.destroy();
      // A message split into fragments is counted whole: refused once the fragments pass the limit.
      const fragmented = await RawWebSocket.open(server.url, path, { headers: { authorization: `Bearer ${server.token}` } });
      const piece = new Uint8Array(MAX_CLIENT_FRAME_BYTES / 2);
      await fragmented.write(RawWebSocket.frame(Opcode.BINARY, piece, { fin: false }));
      await fragmented.write(RawWebSocket.frame(0x0, piece, { fin: false }));
      await fragmented.write(RawWebSocket.frame(0x0, new Uint8Array(1), { fin: false }));
      await waitFor(() => fragmented.closeCode, { message: `close after oversize fragments on ${path}` });
      expect(fragmented.closeCode).toBe(1009);
      fragmented.destroy();
    }
    await waitFor(async () => (await fetchDebugStats(server.url, server.token)).openSockets === 0, { message: "sockets gone" });
  });
});

describe("JSON payloads over HTTP", () => {
  it("random bodies get 2xx or a defined 4xx error, never a 500 or a hang", async () => {
    const target = server.registry.create({ command: ["sleep", "60"] });
    const bodies = fc.sample(fc.oneof(fc.json(), fc.string({ unit: "binary", maxLength: 80 }), fc.jsonValue().map((v) => JSON.stringify({ open_api: v, title: v, name: v, capabilities: v }))), {
      seed: SEED,
      numRuns: FUZZ_BODIES,
    });
    for (const [method, path] of [
      ["PUT", "/api/settings"],
      ["PATCH", `/api/sessions/${target.id}`],
      ["POST", "/api/tokens"],
    ] as const) {
      for (const body of bodies) {
        const res = await server.api(path, { method, body, headers: { "content-type": "application/json" } });
        const text = await res.text();
        expect([200, 201, 400, 413], `${method} ${path} ${JSON.stringify(body)} → ${res.status} ${text}`).toContain(res.status);
        if (res.status >= 400) expect(JSON.parse(text)).toEqual({ error: { code: expect.any(String), message: expect.any(String) } });
      }
    }
    expect(target.status).toBe("running");
  }, 30_000);
});

describe(`a burst of ${BURST} handshakes from one address`, () => {
  // A server process of its own: the flood's client side gets this process, the server the other core.
  let burstServer: ServerProcess;
  let dataDir: string;
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "webmux-burst-"));
    burstServer = await startServerProcess(dataDir);
  });
  afterAll(async () => {
    await burstServer?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("is bounded by the per-address cap with clear 429 refusals while the server stays responsive", async () => {
    const headers = { authorization: `Bearer ${burstServer.token}` };
    const created = await fetch(`${burstServer.url}/api/sessions`, { method: "POST", headers, body: JSON.stringify({ command: ["sleep", "600"] }) });
    const session = (await created.json()) as SessionInfo;
    const path = `/ws/s/${session.id}`;
    const open: RawWebSocket[] = [];
    const refusals = new Map<string, number>();
    let slowest = 0;
    let probing = true;
    const probe = (async () => {
      while (probing) {
        const t0 = Date.now();
        const res = await fetch(`${burstServer.url}/api/sessions/${session.id}`, { headers });
        expect(res.status).toBe(200);
        await res.arrayBuffer();
        slowest = Math.max(slowest, Date.now() - t0);
      }
    })();
    const started = Date.now();
    for (let at = 0; at < BURST; at += BURST_WINDOW) {
      const wave = Array.from({ length: Math.min(BURST_WINDOW, BURST - at) }, () => RawWebSocket.start(burstServer.url, path, { headers }));
      await Promise.all(wave.map((ws) => ws.handshake()));
      for (const ws of wave) {
        if (ws.upgraded) open.push(ws);
        else {
          const key = `${ws.status} ${ws.body}`;
          refusals.set(key, (refusals.get(key) ?? 0) + 1);
          ws.destroy();
        }
      }
    }
    const elapsed = Date.now() - started;
    probing = false;
    await probe;
    expect(open.length).toBe(DEFAULT_MAX_CONNECTIONS_PER_ADDRESS);
    // Refused by the WebSocket cap, or (a wave's handshakes past the HTTP cap) before their request was read.
    const count = [...refusals.values()].reduce((a, b) => a + b, 0);
    expect(count).toBe(BURST - DEFAULT_MAX_CONNECTIONS_PER_ADDRESS);
    const messages = new Set([
      `127.0.0.1 already holds ${DEFAULT_MAX_CONNECTIONS_PER_ADDRESS} WebSockets, the limit per address; close some first`,
      `127.0.0.1 already holds ${DEFAULT_MAX_HTTP_CONNECTIONS_PER_ADDRESS} HTTP connections, the limit per address; close some first`,
    ]);
    for (const refusal of refusals.keys()) {
      expect(refusal).toMatch(/^429 /);
      const { error } = JSON.parse(refusal.slice(4)) as { error: { code: string; message: string } };
      expect(error.code).toBe("RATE_LIMITED");
      expect(messages).toContain(error.message);
    }
    expect(slowest).toBeLessThan(RESPONSIVE_MS);
    // Another address is not held back by this one's flood.
    const other = await RawWebSocket.open(burstServer.url, path, { headers, localAddress: "127.0.0.2" });
    expect(other.status).toBe(101);
    console.log(`burst: ${BURST} handshakes in ${elapsed} ms, ${open.length} upgraded, ${count} refused with 429 (${[...refusals.values()].join(" + ")}); slowest API answer meanwhile ${slowest} ms`);
    for (const ws of [...open, other]) ws.destroy();
    await waitFor(async () => (await fetchDebugStats(burstServer.url, burstServer.token)).openSockets === 0, { timeout: 15_000, message: "burst sockets gone" });
  }, 60_000);
});
