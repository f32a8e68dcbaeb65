import { mkdtempSync, rmSync } from "node:fs";
import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { request as httpsRequest } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { decodeServerFrame, encodeInput } from "../contract/frames.ts";
import { startTestServer, TEST_SHELL_COMMAND, type TestServer } from "../testing/test-server.ts";
import { waitFor } from "../testing/wait.ts";
import { writeTestCertificate, type TestCertificate } from "../testing/test-certificate.ts";
import { handshakeStatus } from "../testing/handshake-status.ts";

type Answer = { status: number; headers: IncomingHttpHeaders; body: string };

/** A request that trusts exactly our test certificate (fetch cannot be given a CA without undici). */
function send(url: string, options: { method?: string; headers?: Record<string, string>; body?: string; ca?: string } = {}): Promise<Answer> {
  const request = url.startsWith("https:") ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? "GET", headers: options.headers, ca: options.ca }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end(options.body);
  });
}

function login(server: TestServer, headers: Record<string, string> = {}, ca?: string): Promise<Answer> {
  return send(`${server.url}/api/login`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify({ token: server.token }), ca });
}

function setCookie(answer: Answer): string {
  expect(answer.status).toBe(204);
  const cookie = answer.headers["set-cookie"]?.[0];
  expect(cookie).toMatch(/^webmux_session=/);
  return cookie!;
}

/** The status a WebSocket handshake to /ws/sessions is answered with (101 when it upgraded). */
const handshake = (url: string, headers: Record<string, string>, ca?: string) => handshakeStatus(`${url}/ws/sessions`, { headers, ca });

let dir: string;
let certificate: TestCertificate;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "webmux-tls-"));
  certificate = await writeTestCertificate(dir);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("a server with --tls-cert / --tls-key", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ tls: { certFile: certificate.certFile, keyFile: certificate.keyFile } });
  });
  afterAll(() => server?.stop());

  it("answers HTTPS at an https:// URL with its real port", async () => {
    expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(server.url).not.toMatch(/:0$/);
    const answer = await send(`${server.url}/api/sessions`, { headers: { authorization: `Bearer ${server.token}` }, ca: certificate.cert });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ sessions: [] });
  });

  it("sets the login cookie Secure, from the login form and from the login link", async () => {
    expect(setCookie(await login(server, {}, certificate.cert))).toMatch(/; Secure$/);
    const link = await send(`${server.url}/?token=${encodeURIComponent(server.token)}`, { ca: certificate.cert });
    expect(link.status).toBe(302);
    expect(link.headers["set-cookie"]?.[0]).toContain("; Secure");
  });

  it("streams a bash session over WSS with the terminal protocol, typing included", async () => {
    const res = await send(`${server.url}/api/sessions`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
      body: JSON.stringify({ command: TEST_SHELL_COMMAND }),
      ca: certificate.cert,
    });
    expect(res.status).toBe(201);
    const { id } = JSON.parse(res.body) as { id: string };
    const ws = new WebSocket(`${server.url.replace(/^https/, "wss")}/ws/s/${id}?client=tls-test-0001`, {
      headers: { authorization: `Bearer ${server.token}` },
      ca: certificate.cert,
    });
    let output = "";
    const types: string[] = [];
    ws.on("message", (data: Buffer) => {
      const frame = decodeServerFrame(new Uint8Array(data));
      types.push(frame.type);
      if (frame.type === "output") output += Buffer.from(frame.data).toString("utf8");
    });
    await new Promise<void>((resolve, reject) => ws.once("open", resolve).once("error", reject));
    await waitFor(() => types.includes("status"), { message: "attach frames" });
    ws.send(encodeInput("echo over-wss-$((6*7))\r"));
    await waitFor(() => output.includes("over-wss-42"), { message: `bash output over wss (got ${JSON.stringify(output)})` });
    ws.close();
  });

  it("refuses a plain-HTTP client on the TLS port", async () => {
    await expect(send(server.url.replace(/^https/, "http") + "/api/sessions")).rejects.toThrow();
  });
});

describe("a plain HTTP server", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server?.stop());

  it("sets the login cookie without Secure (a browser would drop a Secure cookie over http://)", async () => {
    expect(setCookie(await login(server))).not.toContain("Secure");
  });

  it("ignores forged forwarding headers without --trust-proxy", async () => {
    const forged = { "x-forwarded-proto": "https", "x-forwarded-host": "forwarded.host", forwarded: "proto=https;host=forwarded.host" };
    expect(setCookie(await login(server, forged))).not.toContain("Secure");
    const cookie = setCookie(await login(server)).split(";")[0]!;
    expect(await handshake(server.url, { cookie, origin: "https://forwarded.host", ...forged })).toBe(403);
    // the server's own origin still passes, headers or not
    expect(await handshake(server.url, { cookie, origin: server.url, ...forged })).toBe(101);
  });

  it("refuses a cookie-authenticated state change from a foreign page", async () => {
    const cookie = setCookie(await login(server)).split(";")[0]!;
    const create = (origin: string) =>
      send(`${server.url}/api/sessions`, { method: "POST", headers: { cookie, origin, "content-type": "application/json" }, body: JSON.stringify({ command: ["true"] }) });
    const foreign = await create("http://evil.example");
    expect(foreign.status).toBe(403);
    expect(JSON.parse(foreign.body).error.code).toBe("CAPABILITY_DENIED");
    expect((await create(server.url)).status).toBe(201);
  });
});

describe("a plain HTTP server with --trust-proxy", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ trustProxy: true });
  });
  afterAll(() => server?.stop());

  it("sets the cookie Secure when the proxy says X-Forwarded-Proto: https (or Forwarded: proto=https), not otherwise", async () => {
    expect(setCookie(await login(server, { "x-forwarded-proto": "https" }))).toMatch(/; Secure$/);
    expect(setCookie(await login(server, { forwarded: 'for=10.0.0.1;proto="https";host=forwarded.host' }))).toMatch(/; Secure$/);
    expect(setCookie(await login(server, { "x-forwarded-proto": "http" }))).not.toContain("Secure");
    expect(setCookie(await login(server))).not.toContain("Secure");
  });

  it("accepts the Origin the browser saw through the proxy, and only that one", async () => {
    const cookie = setCookie(await login(server, { "x-forwarded-proto": "https" })).split(";")[0]!;
    const proxied = { cookie, "x-forwarded-proto": "https", "x-forwarded-host": "forwarded.host" };
    expect(await handshake(server.url, { ...proxied, origin: "https://forwarded.host" })).toBe(101);
    expect(await handshake(server.url, { ...proxied, origin: "https://forwarded.host:443" })).toBe(101);
    expect(await handshake(server.url, { ...proxied, origin: "http://forwarded.host" })).toBe(403);
    expect(await handshake(server.url, { ...proxied, origin: "https://evil.example" })).toBe(403);
    // With the proxy's headers in use, the backend's own address is not the browser's origin any more.
    expect(await handshake(server.url, { ...proxied, origin: server.url })).toBe(403);
    expect(await handshake(server.url, { cookie, forwarded: "proto=https;host=forwarded.host", origin: "https://forwarded.host" })).toBe(101);
  });
});
