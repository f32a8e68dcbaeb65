import { spawn } from "node:child_process";
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { writeTestCertificate } from "../testing/test-certificate.ts";

const RELAY = fileURLToPath(new URL("./hook-relay.mjs", import.meta.url));
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

type Received = { url: string; secret: string | undefined; body: unknown };

/** Run the relay as the agent would: the hook's JSON on stdin; resolves with its exit code. */
function runRelay(url: string, event: string, stdin: string): Promise<number | null> {
  const child = spawn(process.execPath, [RELAY, event], {
    env: { ...process.env, WEBMUX_HYBRID_URL: url, WEBMUX_HYBRID_SECRET: "hook-secret-1", WEBMUX_SESSION: "s-1" },
    stdio: ["pipe", "ignore", "ignore"],
  });
  child.stdin.end(stdin);
  return new Promise((resolve) => child.once("exit", (code) => resolve(code)));
}

async function listen(server: ReturnType<typeof createHttpServer>, received: Received[]): Promise<number> {
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ url: req.url ?? "", secret: req.headers["x-webmux-hook-secret"] as string | undefined, body: JSON.parse(Buffer.concat(chunks).toString()) });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

describe("hook-relay.mjs", () => {
  it("posts the hook with the session's secret to a plain HTTP server", async () => {
    const received: Received[] = [];
    const server = createHttpServer();
    const port = await listen(server, received);
    try {
      expect(await runRelay(`http://127.0.0.1:${port}`, "Stop", '{"session_id":"c-1"}')).toBe(0);
      expect(received).toEqual([{ url: "/api/hybrid/s-1/hook", secret: "hook-secret-1", body: { event: "Stop", payload: { session_id: "c-1" } } }]);
    } finally {
      server.close();
    }
  });

  it("reaches a server on HTTPS (webmux serve --tls-cert) whose certificate the relay has no CA for", async () => {
    const dir = mkdtempSync(join(tmpdir(), "webmux-relay-"));
    dirs.push(dir);
    const cert = await writeTestCertificate(dir);
    const received: Received[] = [];
    const server = createHttpsServer({ cert: readFileSync(cert.certFile), key: readFileSync(cert.keyFile) });
    const port = await listen(server as unknown as ReturnType<typeof createHttpServer>, received);
    try {
      expect(await runRelay(`https://127.0.0.1:${port}`, "UserPromptSubmit", '{"prompt":"hi"}')).toBe(0);
      expect(received).toEqual([{ url: "/api/hybrid/s-1/hook", secret: "hook-secret-1", body: { event: "UserPromptSubmit", payload: { prompt: "hi" } } }]);
    } finally {
      server.close();
    }
  });

  it("exits 0 at once when the server is gone", async () => {
    const server = createHttpServer();
    const port = await listen(server, []);
    await new Promise((resolve) => server.close(resolve));
    expect(await runRelay(`http://127.0.0.1:${port}`, "Stop", "{}")).toBe(0);
  });
});
