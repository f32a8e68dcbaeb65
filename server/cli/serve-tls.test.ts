import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawn as spawnPty, type IPty } from "node-pty";
import QRCode from "qrcode";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { writeTestCertificate, type TestCertificate } from "../testing/test-certificate.ts";
import { waitFor } from "../testing/wait.ts";
import { listeningUrl, NODE_WEBMUX, REPO_ROOT, runWebmux, stopWebmuxProcesses, type WebmuxRun } from "../testing/webmux-process.ts";

const BUN = join(REPO_ROOT, "node_modules", ".bin", "bun");
const TOKEN = "serve-tls-token-0123456789";
/** The blocks `qrcode`'s small terminal renderer draws with. */
const QR_BLOCKS = /[▀▄█]{4}/;

const ptys: IPty[] = [];
const dirs: string[] = [];
let certificate: TestCertificate;
beforeAll(async () => {
  certificate = await writeTestCertificate(tempDir());
});
afterEach(() => {
  stopWebmuxProcesses();
  for (const p of ptys.splice(0)) p.kill("SIGKILL");
});
afterAll(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "webmux-serve-tls-"));
  dirs.push(dir);
  return dir;
}

type Run = WebmuxRun;

function webmux(args: string[], runtime: string[] = NODE_WEBMUX): Run {
  return runWebmux(["serve", "--stop-sessions-on-exit", "--port", "0", "--data-dir", tempDir(), "--token", TOKEN, ...args], { runtime });
}

const listening = (run: Run) => listeningUrl(run);

/** The start-up lines on stderr come in one write after the listening line: wait for the login one. */
async function startupStderr(run: Run): Promise<string> {
  await waitFor(() => run.err().includes("to log in\n"), { timeout: 10_000, message: "login line" });
  return run.err();
}

const tls = () => ["--tls-cert", certificate.certFile, "--tls-key", certificate.keyFile];

describe("webmux serve --tls-cert/--tls-key", () => {
  it("prints the https:// listening line alone on stdout and an https login link", async () => {
    const run = webmux(tls());
    const url = await listening(run);
    expect(url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(run.out().trim().split("\n")).toEqual([`listening on ${url}`]);
    const stderr = await startupStderr(run);
    expect(stderr).toContain(`webmux: open ${url}/ and paste the token given with --token (or WEBMUX_TOKEN) to log in`);
    expect(stderr).not.toContain(TOKEN); // stderr is a pipe: the link with the token is for a terminal only
    run.proc.kill("SIGTERM");
    expect(await run.exit).toBe(0);
  });

  it("refuses a missing, unreadable or mismatched file with one line and exit 1", async () => {
    const dir = tempDir();
    const other = await writeTestCertificate(dir);
    const notPem = join(dir, "not-pem.txt");
    writeFileSync(notPem, "hello");
    const cases: [string[], RegExp][] = [
      [["--tls-cert", join(dir, "missing.pem"), "--tls-key", certificate.keyFile], /^webmux: cannot read TLS certificate .*missing\.pem: no such file$/],
      [["--tls-cert", certificate.certFile, "--tls-key", dir], /^webmux: cannot read TLS key .*: is a directory$/],
      [["--tls-cert", notPem, "--tls-key", certificate.keyFile], /^webmux: TLS certificate .*not-pem\.txt is not a PEM certificate$/],
      [["--tls-cert", certificate.certFile, "--tls-key", other.keyFile], /^webmux: TLS key .*key\.pem does not belong to certificate .*cert\.pem$/],
    ];
    for (const [args, message] of cases) {
      const run = webmux(args);
      expect(await run.exit, args.join(" ")).toBe(1);
      expect(run.err().trimEnd().split("\n"), args.join(" ")).toHaveLength(1);
      expect(run.err().trimEnd()).toMatch(message);
      expect(run.out()).toBe("");
    }
    const half = webmux(["--tls-cert", certificate.certFile]);
    expect(await half.exit).toBe(2);
    expect(half.err()).toMatch(/--tls-cert and --tls-key go together/);
  });
});

describe("the plain-HTTP warning", () => {
  it("appears for --host 0.0.0.0 without TLS and names both remedies", async () => {
    const run = webmux(["--host", "0.0.0.0"]);
    await listening(run);
    const warning = (await startupStderr(run)).split("\n").find((l) => l.includes("warning"));
    expect(warning).toMatch(/^webmux: warning: listening on 0\.0\.0\.0 over plain HTTP: .*--tls-cert\/--tls-key.*--trust-proxy/);
  });

  it("does not appear with TLS on 0.0.0.0, nor on loopback", async () => {
    for (const args of [["--host", "0.0.0.0", ...tls()], []]) {
      const run = webmux(args);
      await listening(run);
      expect(await startupStderr(run), args.join(" ")).not.toContain("warning");
      run.proc.kill("SIGKILL");
    }
  });

  it("becomes a loopback hint with --trust-proxy on 0.0.0.0", async () => {
    const run = webmux(["--host", "0.0.0.0", "--trust-proxy"]);
    await listening(run);
    expect(await startupStderr(run)).toMatch(/warning: --trust-proxy while listening on 0\.0\.0\.0: .*listen on 127\.0\.0\.1/);
  });
});

describe("the login QR code", () => {
  it("is never written when stdout is a pipe", async () => {
    const run = webmux([]);
    await listening(run);
    await startupStderr(run);
    expect(run.out() + run.err()).not.toMatch(QR_BLOCKS);
  });

  /** `webmux serve` on a real terminal; everything it draws, stdout and stderr together. */
  function onTerminal(args: string[]): { screen: () => string } {
    const pty = spawnPty(process.execPath, ["bin/webmux.js", "serve", "--stop-sessions-on-exit", "--port", "0", "--data-dir", tempDir(), "--token", TOKEN, ...args], {
      cwd: REPO_ROOT,
      cols: 120,
      rows: 60,
      env: { ...process.env, NO_COLOR: "1" } as Record<string, string>,
    });
    ptys.push(pty);
    let screen = "";
    pty.onData((d) => (screen += d));
    return { screen: () => screen };
  }

  it("is drawn on a terminal after the unchanged listening line, and not with --no-qr", async () => {
    const shown = onTerminal([]);
    await waitFor(() => shown.screen().includes("scan to log in from a phone"), { timeout: 20_000, message: "QR caption" });
    const screen = shown.screen();
    const url = /^listening on (http:\/\/127\.0\.0\.1:\d+)\r?$/m.exec(screen)?.[1];
    expect(url).toBeDefined();
    // the code drawn is exactly the one for the login link, token included
    const expected = await QRCode.toString(`${url}/?token=${TOKEN}`, { type: "terminal", small: true });
    const lines = screen.split(/\r?\n/);
    for (const row of expected.split("\n").filter((r) => QR_BLOCKS.test(r))) expect(lines).toContain(row);
    // the caption names where the code leads, not the token (the code itself holds it)
    expect(screen.split("\n").find((l) => l.startsWith("scan to log in"))).not.toContain(TOKEN);

    const hidden = onTerminal(["--no-qr"]);
    await waitFor(() => hidden.screen().includes("to log in"), { timeout: 20_000, message: "login line" });
    // On a terminal the login line is the link itself, token included.
    expect(hidden.screen()).toMatch(new RegExp(`webmux: open http://127\\.0\\.0\\.1:\\d+/\\?token=${TOKEN} to log in`));
    expect(hidden.screen()).not.toMatch(QR_BLOCKS);
    expect(hidden.screen()).not.toContain("scan to log in");
  });
});

describe("TLS under Bun", () => {
  it("serves HTTPS and WSS with the same flags", async () => {
    expect(existsSync(BUN), `${BUN} is missing: run npm install`).toBe(true);
    const run = webmux(tls(), [BUN, "server/main.ts"]);
    const url = await listening(run);
    expect(url).toMatch(/^https:/);
    const status = await new Promise<number>((resolve, reject) => {
      request(`${url}/api/sessions`, { headers: { authorization: `Bearer ${TOKEN}` }, ca: readFileSync(certificate.certFile) }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
        .on("error", reject)
        .end();
    });
    expect(status).toBe(200);
    const ws = new WebSocket(`${url.replace(/^https/, "wss")}/ws/sessions`, { headers: { authorization: `Bearer ${TOKEN}` }, ca: certificate.cert });
    const first = await new Promise<string>((resolve, reject) => ws.once("message", (m) => resolve(String(m))).once("error", reject));
    expect(JSON.parse(first)).toMatchObject({ type: "snapshot", sessions: [] });
    ws.close();
    run.proc.kill("SIGTERM");
    expect(await run.exit).toBe(0);
  }, 30_000);
});
