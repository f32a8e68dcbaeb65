/** Helpers for the Agent API's tests: a server with the API on, shells with an empty HOME, runs, tokens, /ws/agent. */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WebSocket } from "ws";
import type { AgentRunResult, Capability, SessionInfo } from "../contract/types.ts";
import { startTestServer, type TestServer } from "../testing/test-server.ts";
import { waitFor } from "../testing/wait.ts";

export type Shell = "bash" | "zsh" | "sh";

export function startAgentServer(): Promise<TestServer> {
  return startTestServer({ openApi: true });
}

/** An interactive shell whose HOME is empty: no user rc files, so every run behaves the same. */
export async function shellSession(server: TestServer, shell: Shell): Promise<SessionInfo> {
  const home = mkdtempSync(join(tmpdir(), "webmux-home-"));
  return server.createSession({ command: [shell], env: { HOME: home }, cwd: home });
}

/** Until the shell sits at a prompt reading input (integrated shells only). */
export async function atPrompt(server: TestServer, id: string): Promise<void> {
  await waitFor(() => server.agent.trackerOf(id)?.isReady(), { message: `session ${id} at a prompt` });
}

export type Answer<T> = { status: number; body: T; headers: Headers };

export async function post<T = AgentRunResult>(server: TestServer, path: string, json: unknown, token = server.token, signal?: AbortSignal): Promise<Answer<T>> {
  const res = await server.api(path, { method: "POST", json, headers: { authorization: `Bearer ${token}` }, signal });
  return { status: res.status, body: (await res.json()) as T, headers: res.headers };
}

export async function get<T>(server: TestServer, path: string, token = server.token): Promise<Answer<T>> {
  const res = await server.api(path, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, body: (await res.json()) as T, headers: res.headers };
}

export function run(server: TestServer, json: Record<string, unknown>, token = server.token, signal?: AbortSignal): Promise<Answer<AgentRunResult>> {
  return post<AgentRunResult>(server, "/api/agent/run", json, token, signal);
}

export async function createToken(server: TestServer, capabilities: Capability[], expiresIn?: number): Promise<{ token: string; id: string }> {
  const res = await post<{ token: string; token_info: { id: string } }>(server, "/api/tokens", {
    name: `test ${capabilities.join(" ")}`,
    capabilities,
    ...(expiresIn !== undefined ? { expires_in: expiresIn } : {}),
  });
  if (res.status !== 201) throw new Error(`token not created: ${res.status} ${JSON.stringify(res.body)}`);
  return { token: res.body.token, id: res.body.token_info.id };
}

export type AgentFrame = { type: string; id?: unknown; [key: string]: unknown };

/** A /ws/agent client that keeps every frame it receives. */
export class AgentSocket {
  readonly frames: AgentFrame[] = [];
  closeCode: number | null = null;

  private constructor(readonly ws: WebSocket) {
    ws.on("message", (data) => this.frames.push(JSON.parse(data.toString()) as AgentFrame));
    ws.on("close", (code) => (this.closeCode = code));
    ws.on("error", () => {});
  }

  /** Connect; rejects with the handshake's HTTP status when refused. */
  static connect(server: TestServer, token = server.token): Promise<AgentSocket> {
    const ws = new WebSocket(`${server.url.replace(/^http/, "ws")}/ws/agent`, { headers: { authorization: `Bearer ${token}` } });
    return new Promise((resolve, reject) => {
      ws.once("open", () => resolve(new AgentSocket(ws)));
      ws.once("unexpected-response", (_req, res) => reject(new Error(`handshake answered ${res.statusCode}`)));
      ws.once("error", reject);
    });
  }

  send(frame: unknown): void {
    this.ws.send(JSON.stringify(frame));
  }

  async next(predicate: (frame: AgentFrame) => boolean, message = "frame", timeout = 15_000): Promise<AgentFrame> {
    return waitFor(() => this.frames.find(predicate), { timeout, message });
  }

  close(): void {
    this.ws.close();
  }
}
