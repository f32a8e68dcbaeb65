import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { startTestServer, type TestServer } from "../testing/test-server.ts";
import { waitFor } from "../testing/wait.ts";
import { BASE_FAILURE_DELAY_MS, FREE_FAILURES } from "./failure-throttle.ts";
import { handshakeStatus } from "../testing/handshake-status.ts";

let server: TestServer;
let staticDir: string;
beforeAll(async () => {
  staticDir = mkdtempSync(join(tmpdir(), "webmux-static-"));
  writeFileSync(join(staticDir, "index.html"), "<!doctype html><title>webmux</title>");
  mkdirSync(join(staticDir, "assets"));
  writeFileSync(join(staticDir, "assets", "app.js"), "console.log(1)");
  writeFileSync(join(staticDir, "manifest.webmanifest"), "{}");
  server = await startTestServer({ staticDir });
});
afterAll(async () => {
  await server?.stop();
});

/** The status a WebSocket handshake is answered with (101 when it upgraded). */
const handshake = (path: string, headers: Record<string, string>, localAddress?: string) => handshakeStatus(server.url + path, { headers, localAddress });

let firstCookie: Promise<string> | null = null;
/** One login for the file: later tests' wrong tokens make a login from this address wait (429). */
function loginCookie(): Promise<string> {
  return (firstCookie ??= logIn());
}

async function logIn(): Promise<string> {
  const res = await fetch(server.url + "/api/login", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ token: server.token }),
  });
  expect(res.status).toBe(204);
  const setCookie = res.headers.get("set-cookie")!;
  expect(setCookie).toMatch(/^webmux_session=[^;]+;/);
  expect(setCookie).toContain("HttpOnly");
  expect(setCookie).toContain("SameSite=Strict");
  expect(setCookie).toContain("Path=/");
  expect(setCookie).not.toContain(server.token);
  return setCookie.split(";")[0]!;
}

/** GET a raw, unnormalised path (fetch would resolve the dots itself); returns the body. */
function rawGet(path: string): Promise<string> {
  const { port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, method: "GET" }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c) => (body += c));
      res.on("end", () => resolve(body));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("authentication", () => {
  it("refuses every API route without a credential, and does nothing", async () => {
    // A real session, so a refusal cannot be a 404 in disguise, and DELETE/restart/PATCH are seen to do nothing.
    const s = server.registry.create({ command: ["sleep", "100"] });
    const { generation, title } = s.info();
    for (const [method, path] of [
      ["GET", "/api/sessions"],
      ["POST", "/api/sessions"],
      ["GET", `/api/sessions/${s.id}`],
      ["PATCH", `/api/sessions/${s.id}`],
      ["POST", `/api/sessions/${s.id}/restart`],
      ["DELETE", `/api/sessions/${s.id}`],
      ["GET", `/api/sessions/${s.id}/buffer`],
      ["GET", "/api/settings"],
      ["PUT", "/api/settings"],
      ["GET", "/api/debug/stats"],
      ["GET", "/api/tokens"],
      ["POST", "/api/tokens"],
      ["POST", "/api/agent/run"],
      ["GET", "/api/unknown"],
    ] as const) {
      const body = method === "GET" ? undefined : JSON.stringify({ title: "hijacked", open_api: { enabled: true } });
      const res = await fetch(server.url + path, { method, body, headers: { "content-type": "application/json" } });
      expect(res.status, `${method} ${path}`).toBe(401);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("UNAUTHORIZED");
    }
    expect(server.registry.get(s.id)?.info()).toMatchObject({ status: "running", generation, title });
    expect(server.registry.list()).toHaveLength(1);
    expect(server.settings.get().open_api.enabled).toBe(false);
    await server.registry.remove(s.id);
  });

  it("accepts the global token as a Bearer credential and refuses a wrong one", async () => {
    expect((await fetch(server.url + "/api/sessions", { headers: { authorization: `Bearer ${server.token}` } })).status).toBe(200);
    expect((await fetch(server.url + "/api/sessions", { headers: { authorization: `Bearer ${server.token}x` } })).status).toBe(401);
    expect((await fetch(server.url + "/api/sessions", { headers: { authorization: `Basic ${server.token}` } })).status).toBe(401);
  });

  it("logs a browser in with POST /api/login and the cookie it sets", async () => {
    const cookie = await loginCookie();
    const res = await fetch(server.url + "/api/sessions", { headers: { cookie } });
    expect(res.status).toBe(200);
    const wrong = await fetch(server.url + "/api/login", { method: "POST", body: JSON.stringify({ token: "nope-nope-nope-nope" }) });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get("set-cookie")).toBeNull();
    const forged = cookie.replace(/.$/, (c) => (c === "A" ? "B" : "A"));
    expect((await fetch(server.url + "/api/sessions", { headers: { cookie: forged } })).status).toBe(401);
  });

  it("logs a cookie out server side: a copy of it stops working, also after a restart, while other logins go on", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "webmux-logout-"));
    let own = await startTestServer({ dataDir });
    try {
      const login = async () => (await fetch(own.url + "/api/login", { method: "POST", body: JSON.stringify({ token: own.token }) })).headers.get("set-cookie")!.split(";")[0]!;
      const phone = await login();
      const laptop = await login();
      const copy = phone; // what someone who copied the phone's cookie holds
      const out = await fetch(own.url + "/api/logout", { method: "POST", headers: { cookie: phone, origin: own.url } });
      expect(out.status).toBe(204);
      expect(out.headers.get("set-cookie")).toContain("Max-Age=0");
      expect((await fetch(own.url + "/api/sessions", { headers: { cookie: copy } })).status).toBe(401);
      expect((await fetch(own.url + "/api/sessions", { headers: { cookie: laptop } })).status).toBe(200);
      await own.stop();
      own = await startTestServer({ dataDir });
      expect((await fetch(own.url + "/api/sessions", { headers: { cookie: copy } })).status).toBe(401);
      expect((await fetch(own.url + "/api/sessions", { headers: { cookie: laptop } })).status).toBe(200);
      const socket = new WebSocket(own.url.replace("http", "ws") + "/ws/sessions", { headers: { cookie: copy, origin: own.url } });
      const status = await new Promise<number>((resolve) => {
        socket.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
        socket.on("open", () => resolve(101));
        socket.on("error", () => resolve(0));
      });
      socket.close();
      expect(status).toBe(401);
    } finally {
      await own.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("logs in through the /?token= link and sends the browser to a clean URL", async () => {
    const res = await fetch(`${server.url}/?token=${encodeURIComponent(server.token)}`, { redirect: "manual" });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/");
    const cookie = res.headers.get("set-cookie")!.split(";")[0]!;
    expect((await fetch(server.url + "/api/sessions", { headers: { cookie } })).status).toBe(200);
    const bad = await fetch(`${server.url}/?token=wrong-token-wrong`, { redirect: "manual" });
    expect(bad.status).toBe(302);
    expect(bad.headers.get("set-cookie")).toBeNull();
  });

  it("refuses WebSocket handshakes without a credential (401, no upgrade) and foreign-origin cookies (403)", async () => {
    for (const path of ["/ws/sessions", "/ws/s/abcdefgh", "/ws/s/abcdefgh/chat", "/ws/settings", "/ws/agent", "/ws/nothing-here"]) {
      expect(await handshake(path, {}), path).toBe(401);
    }
    // From an address of its own: the wrong tokens of the tests above make this one's next check wait (429).
    expect(await handshake("/ws/s/abcdefgh", { authorization: "Bearer wrong-token-xxxxxxxx" }, "127.0.0.5")).toBe(401);
    const cookie = await loginCookie();
    expect(await handshake("/ws/sessions", { cookie, origin: "http://evil.example" })).toBe(403);
    expect(await handshake("/ws/sessions", { cookie })).toBe(403); // no Origin at all with a cookie
    // Same origin passes authentication (the endpoint itself answers from here on).
    const sameOrigin = await handshake("/ws/nothing-here", { cookie, origin: server.url });
    expect(sameOrigin).toBe(404);
    // A Bearer credential is not a browser: no Origin check.
    expect(await handshake("/ws/nothing-here", { authorization: `Bearer ${server.token}`, origin: "http://evil.example" }, "127.0.0.5")).toBe(404);
  });

  it("serves the app shell without a credential, and nothing outside it", async () => {
    const shell = await fetch(server.url + "/");
    expect(shell.status).toBe(200);
    expect(shell.headers.get("content-type")).toContain("text/html");
    expect(shell.headers.get("x-frame-options")).toBe("DENY");
    // The page may open WebSockets to its own origin only, never to any ws: host.
    const connectSrc = /connect-src ([^;]*)/.exec(shell.headers.get("content-security-policy") ?? "")![1]!.split(" ");
    expect(connectSrc).toEqual(["'self'", `ws://${new URL(server.url).host}`]);
    expect((await fetch(server.url + "/manifest.webmanifest")).status).toBe(200);
    const asset = await fetch(server.url + "/assets/app.js");
    expect(asset.headers.get("cache-control")).toContain("immutable");
    expect((await fetch(server.url + "/some/client/route")).status).toBe(200); // SPA fallback
    expect((await fetch(server.url + "/missing.js")).status).toBe(404);
    for (const path of ["/../../../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/assets/..%2f..%2f..%2fetc%2fpasswd", "/..%5c..%5cetc%5cpasswd"]) {
      expect(await rawGet(path), path).not.toContain("root:");
    }
  });
});

describe("failure throttle", () => {
  // Each burst is sent at once: a burst arrives within the 250 ms wait however busy the machine is.
  const statuses = async (requests: Array<() => Promise<Response>>) => (await Promise.all(requests.map((r) => r()))).map((res) => res.status).sort();
  const count = (list: number[], status: number) => list.filter((s) => s === status).length;

  it("spaces out checks of wrong tokens from one address; a right one resets nothing; hook secrets are counted apart", async () => {
    const own = await startTestServer();
    try {
      const bearer = (token: string) => () => fetch(own.url + "/api/sessions", { headers: { authorization: `Bearer ${token}` } });
      const started = Date.now();
      const burst = await statuses(Array.from({ length: 10 }, (_, i) => bearer(`wrong-wrong-wrong-${i}`)));
      const took = Date.now() - started;
      // The free failures and one more are checked; the rest wait unchecked (one more check per
      // 250 ms, 500 ms… should this busy machine take that long to deliver the burst).
      let allowed = FREE_FAILURES + 1;
      for (let wait = BASE_FAILURE_DELAY_MS, spent = wait; spent <= took; wait *= 2, spent += wait) allowed++;
      expect(count(burst, 401)).toBeGreaterThanOrEqual(FREE_FAILURES + 1);
      expect(count(burst, 401)).toBeLessThanOrEqual(allowed);
      expect(count(burst, 429)).toBe(10 - count(burst, 401));
      const early = await bearer(own.token)();
      if (early.status === 429) {
        expect(Number(early.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
        expect(((await early.json()) as { error: { code: string } }).error.code).toBe("RATE_LIMITED");
      }
      await waitFor(async () => (await bearer(own.token)()).status === 200, { timeout: 5_000, interval: 50, message: "the right token checked after the wait" });
      // The success reset nothing: of three more wrong tokens one is checked, and the failure after it makes the others wait.
      const after = await statuses([bearer("wrong-after-1"), bearer("wrong-after-2"), bearer("wrong-after-3")]);
      expect([count(after, 401), count(after, 429)]).toEqual([1, 2]);
      // Hook secrets have a count of their own: the token guesses above did not use it up.
      const hook = () => fetch(own.url + "/api/hybrid/abcdefgh/hook", { method: "POST", headers: { "x-webmux-hook-secret": "guess" }, body: "{}" });
      const hooks = await statuses(Array.from({ length: 8 }, () => hook));
      expect(count(hooks, 401)).toBeGreaterThanOrEqual(FREE_FAILURES + 1);
      expect(count(hooks, 401)).toBeLessThanOrEqual(FREE_FAILURES + 2); // one more only if the burst took over 250 ms
      expect(count(hooks, 429)).toBe(8 - count(hooks, 401));
    } finally {
      await own.stop();
    }
  });

  it("keeps a browser logged in by cookie while tokens are being guessed from its address", async () => {
    const own = await startTestServer();
    try {
      const login = await fetch(own.url + "/api/login", { method: "POST", body: JSON.stringify({ token: own.token }) });
      const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
      for (let i = 0; i < 20; i++) await fetch(own.url + "/api/sessions", { headers: { authorization: `Bearer guess-${i}` } });
      expect((await fetch(own.url + "/api/sessions", { headers: { cookie } })).status).toBe(200);
    } finally {
      await own.stop();
    }
  });
});
