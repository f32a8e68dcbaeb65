import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_LABEL_CHARS } from "../contract/protocol.ts";
import { BASE_FAILURE_DELAY_MS, FREE_FAILURES } from "../http/failure-throttle.ts";
import { TerminalClient } from "../testing/terminal-client.ts";
import { startTestServer, type TestServer } from "../testing/test-server.ts";
import { waitFor } from "../testing/wait.ts";
import { RawWebSocket } from "../testing/raw-websocket.ts";

/** What must never leave the server through the static file handler. */
const SECRET = "TOP-SECRET-7f3a9c";
/** Wrong-token handshakes in the brute-force burst: past the free ones and the held ones. */
const GUESSES = 100;

let server: TestServer;
let base: string;
beforeAll(async () => {
  // root/ is served; its siblings hold secrets, one of them named like the root plus a suffix
  base = mkdtempSync(join(tmpdir(), "webmux-hostile-"));
  const root = join(base, "root");
  mkdirSync(join(root, "assets"), { recursive: true });
  writeFileSync(join(root, "index.html"), "<!doctype html><title>shell</title>");
  writeFileSync(join(root, "assets", "app.js"), "console.log(1)");
  writeFileSync(join(base, "secret.txt"), SECRET);
  mkdirSync(join(base, "root-evil"));
  writeFileSync(join(base, "root-evil", "x.txt"), SECRET);
  server = await startTestServer({ staticDir: root });
});
afterAll(async () => {
  await server?.stop();
  rmSync(base, { recursive: true, force: true });
});

/** One raw HTTP/1.1 exchange: the request line and headers exactly as given; the whole answer as text. */
function rawRequest(head: string): Promise<string> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    let answer = "";
    socket.setEncoding("latin1");
    socket.on("data", (d) => (answer += d));
    socket.on("end", () => resolve(answer));
    socket.on("error", reject);
    socket.write(`${head}\r\nHost: ${hostname}:${port}\r\nConnection: close\r\n\r\n`);
  });
}

const headOf = (answer: string) => answer.slice(0, answer.indexOf("\r\n\r\n"));
const statusOf = (answer: string) => Number(answer.split(" ")[1]);

describe("static files", () => {
  it("never serve anything outside the client's directory, however the path is spelled", async () => {
    const paths = [
      "/../secret.txt",
      "/..%2fsecret.txt",
      "/%2e%2e/secret.txt",
      "/%2e%2e%2fsecret.txt",
      "/%2E%2E/secret.txt",
      "/assets/../../secret.txt",
      "/assets/%2e%2e/%2e%2e/secret.txt",
      "/%252e%252e/secret.txt",
      "/..%5csecret.txt",
      "/%2e%2e%5csecret.txt",
      "/....//secret.txt",
      "/./../secret.txt",
      "//../secret.txt",
      "/%00../secret.txt",
      "/..%00/secret.txt",
      "/../root-evil/x.txt",
      "/%2e%2e/root-evil/x.txt",
      `/${"../".repeat(30)}${base.slice(1)}/secret.txt`,
      `/${"%2e%2e%2f".repeat(30)}${base.slice(1)}/secret.txt`,
      `http://127.0.0.1/../secret.txt`,
    ];
    for (const path of paths) {
      const answer = await rawRequest(`GET ${path} HTTP/1.1`);
      expect(answer, path).not.toContain(SECRET);
      expect([200, 400, 404], path).toContain(statusOf(answer));
    }
    // what is there is served (the checks above are not vacuous)
    expect(await rawRequest("GET /assets/app.js HTTP/1.1")).toContain("console.log(1)");
  });
});

describe("unparsable request targets", () => {
  const targets = ["//[", "http://[", "http://a%zz/", "http://:80/", "http://a:99999/", "http://[::1/api/sessions", "//evil.example/api/sessions", "*", "127.0.0.1:80"];

  it("get 400 INVALID_REQUEST, with or without a credential, and the server lives on", async () => {
    for (const target of targets) {
      for (const credential of ["", `\r\nAuthorization: Bearer ${server.token}`]) {
        const answer = await rawRequest(`GET ${target} HTTP/1.1${credential}`);
        expect(statusOf(answer), target).toBe(400);
        expect(answer, target).toContain('"code":"INVALID_REQUEST"');
      }
    }
    expect((await fetch(`${server.url}/api/health`)).status).toBe(200);
  });

  it("get 400 at a WebSocket handshake too", async () => {
    for (const target of targets) {
      const ws = await RawWebSocket.open(server.url, target, { headers: { authorization: `Bearer ${server.token}` } });
      expect([target, ws.status]).toEqual([target, 400]);
      expect(ws.body).toContain('"code":"INVALID_REQUEST"');
      ws.destroy();
    }
    const s = server.registry.create({ command: ["sleep", "60"] });
    const good = await RawWebSocket.open(server.url, `http://127.0.0.1/ws/s/${s.id}`, { headers: { authorization: `Bearer ${server.token}` } });
    expect(good.status).toBe(101);
    good.destroy();
  });
});

describe("GET /api/health", () => {
  it("answers without a credential and says nothing else", async () => {
    const res = await fetch(`${server.url}/api/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok" });
    expect((await fetch(`${server.url}/api/health`, { method: "POST" })).status).toBe(401);
  });
});

describe("header injection", () => {
  it("reflects CR/LF from paths, queries and labels nowhere: no header is added, labels are stripped", async () => {
    const injected = "%0d%0aSet-Cookie:%20evil=1%0d%0aX-Injected:%201";
    for (const request of [`GET /api/sessions/abc${injected} HTTP/1.1`, `GET /nothing${injected}.js HTTP/1.1`, `GET /?token=${injected} HTTP/1.1`]) {
      const head = headOf(await rawRequest(`${request}\r\nAuthorization: Bearer ${server.token}`));
      expect(head, request).not.toMatch(/^(set-cookie: evil|x-injected)/im);
    }
    // A header value with a bare CR never gets through the parser to be reflected.
    const bare = await rawRequest(`GET /api/sessions HTTP/1.1\r\nX-Note: a\rSet-Cookie: evil=1`);
    expect(statusOf(bare)).toBe(400);
    expect(bare).not.toMatch(/set-cookie: evil/i);

    const s = server.registry.create({ command: ["sleep", "60"] });
    const raw = await RawWebSocket.open(server.url, `/ws/s/${s.id}?client=inject-0001&label=phone${injected}`, { headers: { authorization: `Bearer ${server.token}` } });
    expect(raw.status).toBe(101);
    expect(raw.head).not.toMatch(/set-cookie|x-injected/i);
    raw.destroy();
    const c = await TerminalClient.connect(server.url, s.id, { token: server.token, client: "inject-0002", label: "phone\r\nSet-Cookie: evil=1" });
    await waitFor(() => c.control?.controller, { message: "seated" });
    expect(c.control!.controller!.label).toBe("phoneSet-Cookie: evil=1");
    await c.close();
  });
});

describe("a bad Origin on a cookie-authenticated WebSocket", () => {
  it("is refused with 403 unless it is exactly the server's own origin", async () => {
    const login = await fetch(`${server.url}/api/login`, { method: "POST", body: JSON.stringify({ token: server.token }) });
    const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
    const { port } = new URL(server.url);
    const handshake = async (origin: string) => {
      const ws = await RawWebSocket.open(server.url, "/ws/sessions", { headers: { cookie, origin } });
      ws.destroy();
      return ws.status;
    };
    for (const origin of [
      "null",
      "file://",
      `http://127.0.0.1:${Number(port) + 1}`,
      `http://127.0.0.1:${port}.evil.example`,
      `http://evil.example#127.0.0.1:${port}`,
      `http://localhost:${port}`,
      `ws://127.0.0.1:${port}`,
      `javascript://127.0.0.1:${port}`,
      `http://127.0.0.1`,
    ]) {
      expect(await handshake(origin), origin).toBe(403);
    }
    expect(await handshake(server.url)).toBe(101);
    expect(await handshake(`HTTP://127.0.0.1:${port}`)).toBe(101); // the same origin, spelled in capitals
  });
});

describe("token brute force", () => {
  it("checks one guess per delay however many arrive at once: the rest get 429 unchecked, the right token among them too", async () => {
    const own = await startTestServer();
    try {
      const s = own.registry.create({ command: ["sleep", "60"] });
      const path = `/ws/s/${s.id}`;
      const started = Date.now();
      const guesses = Array.from({ length: GUESSES }, (_, i) =>
        RawWebSocket.start(own.url, path, { headers: { authorization: `Bearer wrong-guess-${String(i).padStart(6, "0")}` } }),
      );
      await Promise.all(guesses.map((g) => g.handshake()));
      const took = Date.now() - started;
      // The right token, sent right after the burst, is not even checked: the last failure's wait still runs.
      const hidden = await RawWebSocket.open(own.url, path, { headers: { authorization: `Bearer ${own.token}` } });
      const statuses = guesses.map((g) => g.status);
      // The free failures and one more are checked at once (401); after that one check per wait
      // (250 ms, 500 ms, …), however long this busy machine took to deliver the burst.
      let allowed = FREE_FAILURES + 1;
      for (let wait = BASE_FAILURE_DELAY_MS, spent = wait; spent <= took; wait *= 2, spent += wait) allowed++;
      const checked = statuses.filter((x) => x === 401).length;
      expect(checked).toBeGreaterThanOrEqual(FREE_FAILURES + 1);
      expect(checked).toBeLessThanOrEqual(allowed);
      expect(statuses.filter((x) => x === 429).length).toBe(GUESSES - checked);
      expect(hidden.status).toBe(429);
      expect(guesses.find((g) => g.status === 429)!.head).toMatch(/retry-after: \d+/i);

      // Another address is checked as usual.
      const elsewhere = await RawWebSocket.open(own.url, path, { headers: { authorization: "Bearer wrong-elsewhere" }, localAddress: "127.0.0.2" });
      expect(elsewhere.status).toBe(401);
      // Once the wait is over one check is allowed again, and the right token gets in.
      const retries: RawWebSocket[] = [];
      await waitFor(async () => {
        const retry = await RawWebSocket.open(own.url, path, { headers: { authorization: `Bearer ${own.token}` } });
        retries.push(retry);
        return retry.status === 101;
      }, {
        timeout: 5_000,
        interval: BASE_FAILURE_DELAY_MS / 5,
        message: "the right token checked once the wait is over",
      });
      for (const ws of [...guesses, hidden, elsewhere, ...retries]) ws.destroy();
    } finally {
      await own.stop();
    }
  });
});

describe("query parameters at their limits", () => {
  const connectWith = async (id: string, query: Record<string, string>) => {
    const c = await TerminalClient.connect(server.url, id, { token: server.token, query });
    await waitFor(() => c.status, { message: "replay" });
    return c;
  };

  it("client: 8 and 64 characters are kept; 7, 65 or a foreign character get an ID of the server's", async () => {
    const s = server.registry.create({ command: ["sleep", "60"] });
    const cases: Array<[string, boolean]> = [
      ["a".repeat(8), true],
      ["Z_-9".repeat(16), true],
      ["a".repeat(7), false],
      ["a".repeat(65), false],
      ["abcdefg!", false],
      ["abcdefgé", false],
    ];
    for (const [client, kept] of cases) {
      const c = await connectWith(s.id, { client });
      const seated = c.control!.controller!.clientId;
      if (kept) expect(seated).toBe(client);
      else expect(seated, client).toMatch(/^srv-[A-Za-z0-9_-]+$/);
      await c.close();
      await waitFor(() => s.lease.info === null, { message: "seat empty" });
    }
  });

  it("label: control characters removed, then cut to 40 characters (code points), as the 0x06 controller shows", async () => {
    const s = server.registry.create({ command: ["sleep", "60"] });
    const cases: Array<[string, string]> = [
      ["\x1b[31mred\x07 phone\r\n\t\u0085\u009b", "[31mred phone"],
      ["x".repeat(41), "x".repeat(MAX_LABEL_CHARS)],
      ["\x00".repeat(5) + "y".repeat(45), "y".repeat(MAX_LABEL_CHARS)],
      ["📱".repeat(41), "📱".repeat(MAX_LABEL_CHARS)],
    ];
    for (const [label, shown] of cases) {
      const c = await connectWith(s.id, { client: "labelled-01", label });
      expect(c.control!.controller!.label, JSON.stringify(label)).toBe(shown);
      expect(c.status!.controller!.label).toBe(shown);
      await c.close();
      await waitFor(() => s.lease.info === null, { message: "seat empty" });
    }
  });

  it("offset: a sign, a fraction, spaces, other digits or an unsafe integer mean a full replay; a good one appends", async () => {
    const s = server.registry.create({ command: ["sh", "-c", "echo replay-me; sleep 60"] });
    const first = await connectWith(s.id, {});
    await first.waitForText("replay-me");
    const end = first.offset;
    await first.close();
    for (const offset of ["+5", " 5", "5 ", "5.0", "٣", "99999999999999999999", "9007199254740993", String(end + 1_000_000)]) {
      const c = await connectWith(s.id, { generation: s.generation, offset });
      expect(c.position, JSON.stringify(offset)).toMatchObject({ mode: "reset", start: 0, end, truncated: false });
      await c.close();
    }
    for (const offset of ["0", String(end)]) {
      const c = await connectWith(s.id, { generation: s.generation, offset });
      expect(c.position, offset).toMatchObject({ mode: "append", start: Number(offset), end });
      await c.close();
    }
  });
});
