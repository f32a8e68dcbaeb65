import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { startTestServer, type TestServer } from "../testing/test-server.ts";

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
function handshake(path: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(server.url.replace("http", "ws") + path, { headers });
    ws.on("open", () => {
      resolve(101);
      ws.close();
    });
    ws.on("unexpected-response", (_req, res) => {
      resolve(res.statusCode ?? 0);
      res.resume();
    });
    ws.on("error", (err) => reject(err));
  });
}

async function loginCookie(): Promise<string> {
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
    expect(await handshake("/ws/s/abcdefgh", { authorization: "Bearer wrong-token-xxxxxxxx" })).toBe(401);
    const cookie = await loginCookie();
    expect(await handshake("/ws/sessions", { cookie, origin: "http://evil.example" })).toBe(403);
    expect(await handshake("/ws/sessions", { cookie })).toBe(403); // no Origin at all with a cookie
    // Same origin passes authentication (the endpoint itself answers from here on).
    const sameOrigin = await handshake("/ws/nothing-here", { cookie, origin: server.url });
    expect(sameOrigin).toBe(404);
    // A Bearer credential is not a browser: no Origin check.
    expect(await handshake("/ws/nothing-here", { authorization: `Bearer ${server.token}`, origin: "http://evil.example" })).toBe(404);
  });

  it("serves the app shell without a credential, and nothing outside it", async () => {
    const shell = await fetch(server.url + "/");
    expect(shell.status).toBe(200);
    expect(shell.headers.get("content-type")).toContain("text/html");
    expect(shell.headers.get("x-frame-options")).toBe("DENY");
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
  it("answers repeated wrong tokens from one address ever later, and a right one resets it", async () => {
    const own = await startTestServer();
    try {
      const attempt = async (token: string) => {
        const t0 = Date.now();
        const res = await fetch(own.url + "/api/sessions", { headers: { authorization: `Bearer ${token}` } });
        return { status: res.status, ms: Date.now() - t0 };
      };
      const first = await attempt("wrong-wrong-wrong-1");
      expect(first.status).toBe(401);
      expect(first.ms).toBeLessThan(200);
      for (let i = 0; i < 3; i++) await attempt("wrong-wrong-wrong-2");
      const fifth = await attempt("wrong-wrong-wrong-3");
      expect(fifth.status).toBe(401);
      expect(fifth.ms).toBeGreaterThanOrEqual(450); // 4th failure past the free ones: 250 ms, 5th: 500 ms
      const login = await fetch(own.url + "/api/login", { method: "POST", body: JSON.stringify({ token: own.token }) });
      expect(login.status).toBe(204);
      const after = await attempt("wrong-wrong-wrong-4");
      expect(after.ms).toBeLessThan(200);
    } finally {
      await own.stop();
    }
  });
});
