/**
 * Random request lines, headers, bodies and WebSocket frames (fast-check) thrown at a real server
 * process on every path it has: after each input it must still answer `GET /api/health`, never
 * answer 500, and never log an uncaught error (docs/design.md, Hardening and limits).
 */
import fc from "fast-check";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionInfo } from "../contract/types.ts";
import { FAKE_CLAUDE } from "../testing/hybrid-fixture.ts";
import { waitFor } from "../testing/wait.ts";
import { RawWebSocket } from "../testing/raw-websocket.ts";
import { startServerProcess, type ServerProcess } from "../testing/webmux-process.ts";

/** Inputs per property: every route and frame kind many times over, in about 15 s each on an idle machine. */
const HTTP_RUNS = 1000;
const WEBSOCKET_RUNS = 1000;
/** A property's budget on a busy 2-core machine. */
const RUN_TIMEOUT_MS = 180_000;
/** How long one input may take to be answered before the test moves on (a request that waits for its body does). */
const ANSWER_WAIT_MS = 300;

let server: ServerProcess;
let dataDir: string;
/** Session ids the paths are built from; sessions a random DELETE removed are started again. */
const ids: { plain: string; cat: string; hybrid: string } = { plain: "", cat: "", hybrid: "" };
const answers = new Map<number, number>();

async function api(path: string, init: RequestInit & { json?: unknown } = {}): Promise<Response> {
  return fetch(server.url + path, {
    ...init,
    headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
    body: init.json === undefined ? init.body : JSON.stringify(init.json),
  });
}

async function create(body: Record<string, unknown>): Promise<string> {
  const res = await api("/api/sessions", { method: "POST", json: body });
  if (res.status !== 201) throw new Error(`create: ${res.status} ${await res.text()}`);
  return ((await res.json()) as SessionInfo).id;
}

/** The fuzzed shells run no programs: an empty PATH leaves only builtins to random keystrokes. */
async function ensureSessions(): Promise<void> {
  const listed = new Set(((await (await api("/api/sessions")).json()) as { sessions: SessionInfo[] }).sessions.map((s) => s.id));
  const home = join(dataDir, "home");
  const env = { PATH: join(dataDir, "no-programs"), HOME: home };
  if (!listed.has(ids.plain)) ids.plain = await create({ command: ["/bin/bash", "--norc", "--noprofile"], cwd: home, env });
  if (!listed.has(ids.cat)) ids.cat = await create({ command: ["/bin/cat"], cwd: home, env });
  if (!listed.has(ids.hybrid)) {
    ids.hybrid = await create({
      hybrid: { agent: "claude" },
      cwd: home,
      env: { WEBMUX_CLAUDE_BIN: FAKE_CLAUDE, CLAUDE_CONFIG_DIR: join(dataDir, "claude"), FAKE_CLAUDE_DELTA_MS: "5" },
    });
  }
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "webmux-fuzz-"));
  mkdirSync(join(dataDir, "home"));
  mkdirSync(join(dataDir, "no-programs"));
  server = await startServerProcess(join(dataDir, "data"), ["--open-api"]);
  await ensureSessions();
});

afterAll(async () => {
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** The process is alive, answers, and has logged nothing a bug would since `logFrom`. */
async function expectHealthy(input: string, logFrom: number): Promise<void> {
  expect(server.proc.exitCode, `${input}\n${server.stderr()}`).toBeNull();
  const res = await fetch(`${server.url}/api/health`);
  expect(res.status, input).toBe(200);
  await res.arrayBuffer();
  expect(server.stderr().slice(logFrom), input).not.toMatch(/uncaught|unhandled|internal error|upgrade failed|failed:/i);
}

// ---- the pieces of an input ----

const idArb = fc.oneof(
  fc.constantFrom("plain", "cat", "hybrid").map((k) => () => ids[k as keyof typeof ids]),
  fc.oneof(fc.stringMatching(/^[a-z0-9]{8}$/), fc.string({ maxLength: 12 })).map((s) => () => s),
);
/** Every HTTP route with its method, and paths that are no route. */
const ROUTES: Array<[string, string]> = [
  ["GET", "/"],
  ["GET", "/index.html"],
  ["GET", "/manifest.webmanifest"],
  ["GET", "/api"],
  ["GET", "/api/health"],
  ["POST", "/api/login"],
  ["POST", "/api/logout"],
  ["GET", "/api/sessions"],
  ["POST", "/api/sessions"],
  ["GET", "/api/sessions/{id}"],
  ["PATCH", "/api/sessions/{id}"],
  ["DELETE", "/api/sessions/{id}"],
  ["GET", "/api/sessions/{id}/buffer"],
  ["POST", "/api/sessions/{id}/restart"],
  ["POST", "/api/sessions/{id}/move"],
  ["GET", "/api/settings"],
  ["PUT", "/api/settings"],
  ["POST", "/api/agent/run"],
  ["POST", "/api/agent/send"],
  ["GET", "/api/agent/read"],
  ["POST", "/api/tokens"],
  ["GET", "/api/tokens"],
  ["DELETE", "/api/tokens/{id}"],
  ["POST", "/api/hybrid/{id}/hook"],
  ["GET", "/api/debug/stats"],
  ["GET", "/ws/s/{id}"],
];
const API_PATHS = ROUTES.map(([, path]) => path);
const WS_PATHS = ["/ws/s/{id}", "/ws/s/{id}/chat", "/ws/sessions", "/ws/settings", "/ws/agent", "/ws/nothing", "/api/sessions"];

/** Text that looks like what is expected as well as text that does not. */
const text = fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: "binary", maxLength: 40 }), fc.constantFrom("", "%", "%zz", "..", "//[", "\u0000", "a".repeat(3000)));
const query = fc.oneof(
  fc.constant(""),
  fc
    .array(
      fc.tuple(fc.constantFrom("resume", "offset", "client", "label", "compress", "history", "replayAck", "token", "pane_id", "scrollback", "strip_ansi", "x"), text),
      { maxLength: 4 },
    )
    .map((pairs) => "?" + pairs.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join("&")),
  text.map((t) => `?${encodeURI(t.replace(/[\ud800-\udfff]/g, ""))}`),
);
// Mostly inputs a route accepts far enough to act on, the rest anything at all.
const pathArb = (paths: string[]) =>
  fc.oneof(
    { weight: 8, arbitrary: fc.tuple(fc.constantFrom(...paths), idArb, query).map(([p, id, q]) => () => p.replace("{id}", encodeURIComponent(id())) + q) },
    fc.tuple(fc.constantFrom(...paths), text).map(([p, t]) => () => p + t),
    fc.constantFrom("//[", "http://[", "http://a%zz/", "http://:80/", "http://a:99999/", "*", "127.0.0.1:80", "http://x/api/health", "/%00", "/api/%ff").map((t) => () => t),
    text.map((t) => () => t),
  );

const credential = fc.constantFrom("good", "good", "good", "good", "good", "good", "none", "wrong", "cookie");
const credentialHeader = (kind: string): string[] => {
  if (kind === "good") return [`Authorization: Bearer ${server.token}`];
  if (kind === "wrong") return ["Authorization: Bearer wrong-token-0123456789"];
  if (kind === "cookie") return ["Cookie: webmux_session=v1.global.1.forged"];
  return [];
};
const HEADER_NAMES = [
  "Content-Type",
  "Content-Length",
  "Transfer-Encoding",
  "Origin",
  "Host",
  "Connection",
  "Upgrade",
  "Expect",
  "Forwarded",
  "X-Forwarded-For",
  "X-Forwarded-Proto",
  "X-Forwarded-Host",
  "X-Webmux-Hook-Secret",
  "Sec-WebSocket-Extensions",
  "Sec-WebSocket-Protocol",
  "Authorization",
  "Cookie",
  "Accept-Encoding",
  "Range",
  "If-None-Match",
];
const headerValue = fc.oneof(
  { weight: 4, arbitrary: fc.stringMatching(/^[\x20-\x7e]{0,40}$/) },
  text,
  fc.nat().map(String),
  fc.constantFrom("chunked", "application/json", "-1", "1e3", "websocket", "100-continue", "http://127.0.0.1", "null", "for=1.2.3.4;proto=https;host=x"),
);
const header = fc.tuple(fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...HEADER_NAMES) }, fc.stringMatching(/^[A-Za-z0-9-]{1,20}$/)), headerValue);
const jsonBody = fc.oneof(
  fc.json({ maxDepth: 3 }),
  fc
    .record(
      {
        command: fc.oneof(text, fc.array(text, { maxLength: 3 })),
        token: text,
        title: text,
        cols: fc.oneof(fc.integer(), fc.double()),
        rows: fc.oneof(fc.integer(), fc.double()),
        timeout: fc.oneof(fc.integer(), text),
        pane_id: fc.oneof(idArb.map((f) => f()), text),
        to: fc.constantFrom("terminal", "chat", "x"),
        event: text,
        open_api: fc.oneof(fc.record({ enabled: fc.boolean() }), text),
        name: text,
        capabilities: fc.array(fc.constantFrom("terminal:read", "terminal:write", "x"), { maxLength: 3 }),
      },
      { requiredKeys: [] },
    )
    .map((o) => JSON.stringify(o)),
);
const body = fc.oneof(fc.constant(""), jsonBody, fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b).toString("latin1")));
const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "CONNECT", "TRACE"];
const method = fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...METHODS) }, fc.stringMatching(/^[A-Z]{1,10}$/), text);
const version = fc.constantFrom("HTTP/1.1", "HTTP/1.0", "HTTP/2.0", "HTTP/9", "", "HTTP/1.1 extra");

const source = fc.tuple(fc.integer({ min: 1, max: 250 }), fc.integer({ min: 1, max: 250 }));
/** Three in four requests are well-formed HTTP, so they reach the routes and their validation; the rest is anything. */
const httpInput = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      route: fc.tuple(
        fc.oneof({ weight: 4, arbitrary: fc.constant(null) }, fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")),
        fc.constantFrom(...ROUTES),
        idArb,
        query,
      ),
      version: fc.constant("HTTP/1.1"),
      credential,
      headers: fc.array(fc.tuple(fc.constantFrom(...HEADER_NAMES.filter((h) => !/^(content-length|transfer-encoding|host)$/i.test(h))), fc.stringMatching(/^[\x21-\x7e]{0,40}$/)), { maxLength: 4 }),
      body,
      length: fc.constant("exact"),
      /** a source address of its own, so wrong credentials do not slow the next inputs */
      from: source,
    }),
  },
  fc.record({
    route: fc.tuple(method, pathArb(API_PATHS)),
    version,
    credential,
    headers: fc.array(header, { maxLength: 6 }),
    body,
    /** a Content-Length that matches, a wrong one, or none */
    length: fc.constantFrom("exact", "none", "short", "long"),
    from: source,
  }),
);

/** One raw exchange; the status of the answer (0 when the connection closed without one). */
function exchange(bytes: string, from: [number, number]): Promise<number> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port), localAddress: `127.${from[0]}.${from[1]}.1` });
    let answer = "";
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(/^HTTP\/1\.[01] (\d{3})/.exec(answer)?.[1] ? Number(/^HTTP\/1\.[01] (\d{3})/.exec(answer)![1]) : 0);
    };
    const timer = setTimeout(done, ANSWER_WAIT_MS);
    socket.setEncoding("latin1");
    socket.on("data", (d) => {
      answer += d;
      if (answer.includes("\r\n\r\n")) done();
    });
    socket.on("error", done);
    socket.on("close", done);
    socket.write(Buffer.from(bytes, "latin1"));
  });
}

// ---- WebSocket frames ----

/** A terminal-protocol message: a type byte the client may send (or any) and a tail. */
const terminalMessage = fc.tuple(fc.integer({ min: 0, max: 0x12 }), fc.uint8Array({ maxLength: 64 })).map(([t, tail]) => Buffer.concat([Buffer.from([t]), tail]));
const agentMessage = fc
  .record({ type: fc.constantFrom("run", "ping", "subscribe", "x"), id: fc.oneof(fc.integer(), text), command: text, timeout: fc.integer(), pane_id: text }, { requiredKeys: [] })
  .map((o) => Buffer.from(JSON.stringify(o)));
const chatMessage = fc
  .record({ type: fc.constantFrom("prompt", "interrupt", "answer", "move", "x"), id: text, text, to: fc.constantFrom("terminal", "chat") }, { requiredKeys: [] })
  .map((o) => Buffer.from(JSON.stringify(o)));
const payload = fc.oneof(terminalMessage, agentMessage, chatMessage, fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)));
const frame = fc.oneof(
  // well-formed frames of every opcode, fragmented or not, with random reserved bits now and then
  fc.record({ opcode: fc.constantFrom(0x0, 0x1, 0x2, 0x2, 0x2, 0x8, 0x9, 0xa), payload, fin: fc.boolean(), rsv: fc.constantFrom(0, 0, 0, 0, 0x40, 0x20, 0x10) }).map(({ opcode, payload, fin, rsv }) => {
    const bytes = RawWebSocket.frame(opcode, payload, { fin });
    bytes[0]! |= rsv;
    return bytes;
  }),
  // a header announcing more (or far more) than follows
  fc.tuple(fc.constantFrom(0x1, 0x2, 0x9), fc.oneof(fc.nat({ max: 70_000 }), fc.constant(2 ** 40))).map(([opcode, announce]) => RawWebSocket.frame(opcode, Buffer.alloc(4), { announce }).subarray(0, 18)),
  // bytes that are no frame at all (an unmasked frame among them)
  fc.uint8Array({ minLength: 1, maxLength: 64 }).map((b) => Buffer.from(b)),
);
const websocketInput = fc.record({
  path: pathArb(WS_PATHS),
  credential,
  compress: fc.boolean(),
  frames: fc.array(frame, { minLength: 1, maxLength: 6 }),
  from: source,
});

describe("random input on every path", () => {
  it(`HTTP: ${HTTP_RUNS} random requests leave the server answering`, async () => {
    let tried = 0;
    await fc.assert(
      fc.asyncProperty(httpInput, async (input) => {
        const logFrom = server.stderr().length;
        let requestLine: string;
        if (input.route.length === 4) {
          const [otherMethod, [method, path], id, q] = input.route;
          requestLine = `${otherMethod ?? method} ${path.replace("{id}", encodeURIComponent(id())) + q}`;
        } else requestLine = `${input.route[0]} ${input.route[1]()}`;
        const lines = [`${requestLine} ${input.version}`.trimEnd(), `Host: 127.0.0.1`, ...credentialHeader(input.credential), ...input.headers.map(([k, v]) => `${k}: ${v}`)];
        const size = Buffer.byteLength(input.body, "latin1");
        if (input.length === "exact") lines.push(`Content-Length: ${size}`);
        if (input.length === "short") lines.push(`Content-Length: ${Math.max(0, size - 1)}`);
        if (input.length === "long") lines.push(`Content-Length: ${size + 10}`);
        const raw = `${lines.join("\r\n")}\r\n\r\n${input.body}`;
        const status = await exchange(raw, input.from);
        answers.set(status, (answers.get(status) ?? 0) + 1);
        tried++;
        expect(status, JSON.stringify(raw.slice(0, 300))).not.toBe(500);
        await expectHealthy(JSON.stringify(raw.slice(0, 300)), logFrom);
        if (tried % 50 === 0) await ensureSessions();
      }),
      { numRuns: HTTP_RUNS },
    );
    console.log(`fuzz: ${tried} HTTP requests, answers by status: ${JSON.stringify(Object.fromEntries(answers))}`);
    expect(tried).toBe(HTTP_RUNS);
  }, RUN_TIMEOUT_MS);

  it(`WebSocket: ${WEBSOCKET_RUNS} handshakes with random frames leave the server answering`, async () => {
    let tried = 0;
    let upgraded = 0;
    let frames = 0;
    await fc.assert(
      fc.asyncProperty(websocketInput, async (input) => {
        const logFrom = server.stderr().length;
        const path = input.path();
        const headers: Record<string, string> = {};
        for (const line of credentialHeader(input.credential)) headers[line.slice(0, line.indexOf(":"))] = line.slice(line.indexOf(":") + 2);
        if (input.compress) headers["Sec-WebSocket-Extensions"] = "permessage-deflate";
        const ws = await RawWebSocket.open(server.url, path, { headers, localAddress: `127.${input.from[0]}.${input.from[1]}.2` });
        tried++;
        if (ws.upgraded) {
          upgraded++;
          for (const f of input.frames) {
            if (ws.socket.destroyed) break;
            await ws.write(f).catch(() => {});
            frames++;
          }
        }
        // Let the server act on the frames: it answers, closes, or goes on waiting.
        await Promise.race([ws.closed(), new Promise((r) => setTimeout(r, ANSWER_WAIT_MS / 3))]);
        ws.destroy();
        const summary = `${path} ${input.frames.map((f) => f.toString("hex").slice(0, 40)).join(" ")}`;
        expect(ws.status, summary).not.toBe(500);
        await expectHealthy(summary, logFrom);
        if (tried % 50 === 0) await ensureSessions();
      }),
      { numRuns: WEBSOCKET_RUNS },
    );
    console.log(`fuzz: ${tried} WebSocket handshakes (${upgraded} upgraded), ${frames} frames`);
    expect(tried).toBe(WEBSOCKET_RUNS);
    // Every socket of the run is gone and the server still serves sessions.
    await waitFor(async () => ((await (await api("/api/debug/stats")).json()) as { openSockets: number }).openSockets === 0, {
      message: "every fuzzed socket closed",
      timeout: 20_000,
    });
    await ensureSessions();
    await expectHealthy("after the run", 0);
  }, RUN_TIMEOUT_MS);
});
