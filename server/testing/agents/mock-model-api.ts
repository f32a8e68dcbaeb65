/**
 * What both mock model APIs (mock-anthropic.ts, mock-openai.ts) share: an HTTP server on
 * 127.0.0.1 with an ephemeral port, scripted replies chosen by the prompt they contain (later
 * rules win), the request body read leniently as JSON, and JSON answers.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type Json = Record<string, unknown>;

export function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

export abstract class MockModelApi<Reply> {
  protected readonly rules: { match: string | RegExp; replies: Reply[] }[] = [];
  private server: Server | null = null;
  protected counter = 0;
  url = "";

  /** Replies for prompts containing `match`; later rules win over earlier ones. */
  script(match: string | RegExp, ...replies: Reply[]): void {
    this.rules.unshift({ match, replies });
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** The replies of the latest rule whose match the prompt contains. */
  protected rulesFor(prompt: string): Reply[] | undefined {
    return this.rules.find((r) => (typeof r.match === "string" ? prompt.includes(r.match) : r.match.test(prompt)))?.replies;
  }

  protected abstract handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
}

/** The request's body as a JSON object; anything else (not JSON, not an object) reads as `{}`. */
export async function readJsonBody(req: IncomingMessage): Promise<Json> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}");
    return isObject(parsed) ? parsed : {};
  } catch {
    return {};
  }
}
