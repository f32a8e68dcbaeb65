/**
 * The HTTP side of the server as the CLI uses it: sessions and agent tokens. Every failure becomes
 * a CliError with a stable code and a message that says what to do about it.
 */
import type {
  CreateSessionRequest,
  CreateTokenRequest,
  CreateTokenResponse,
  HybridEnd,
  SessionInfo,
  SessionListResponse,
  TokenInfo,
} from "../contract/types.ts";
import { CliError, type ClientOptions } from "./client-options.ts";

/** A local server answers in milliseconds; this only catches a server that accepted and hung. */
export const REQUEST_TIMEOUT_MS = 15_000;

/** `POST /api/sessions` for a hybrid session (docs/hybrid.md § Creating one): the agent instead of a command. */
export type CreateHybridSessionRequest = Omit<CreateSessionRequest, "command"> & {
  hybrid: { agent: string; conversationId?: string; end?: HybridEnd };
};

type ErrorShape = { error?: { code?: unknown; message?: unknown } };

export class WebmuxApi {
  constructor(private readonly options: ClientOptions) {}

  get url(): string {
    return this.options.url;
  }

  listSessions(): Promise<SessionInfo[]> {
    return this.json<SessionListResponse>("GET", "/api/sessions").then((body) => {
      if (!body || !Array.isArray(body.sessions)) throw new CliError("BAD_RESPONSE", "the server's session list has no `sessions` array");
      return body.sessions;
    });
  }

  getSession(id: string): Promise<SessionInfo> {
    return this.json<SessionInfo>("GET", `/api/sessions/${encodeURIComponent(id)}`, undefined, `no session ${id}`);
  }

  createSession(request: CreateSessionRequest | CreateHybridSessionRequest): Promise<SessionInfo> {
    return this.json<SessionInfo>("POST", "/api/sessions", request);
  }

  /** Move a hybrid session's conversation to `to`; a CliError `BUSY` while the agent works and `interrupt` is false. */
  moveSession(id: string, to: HybridEnd, interrupt: boolean): Promise<SessionInfo> {
    return this.json<SessionInfo>("POST", `/api/sessions/${encodeURIComponent(id)}/move`, { to, interrupt }, `no session ${id}`);
  }

  async deleteSession(id: string): Promise<void> {
    await this.request("DELETE", `/api/sessions/${encodeURIComponent(id)}`, undefined, `no session ${id}`);
  }

  createToken(request: CreateTokenRequest): Promise<CreateTokenResponse> {
    return this.json<CreateTokenResponse>("POST", "/api/tokens", request);
  }

  /** The list's envelope is not fixed by docs/agent-api.md: accept `{tokens: [...]}` or a bare array. */
  async listTokens(): Promise<TokenInfo[]> {
    const body = await this.json<unknown>("GET", "/api/tokens");
    const list = Array.isArray(body) ? body : (body as { tokens?: unknown } | null)?.tokens;
    if (!Array.isArray(list)) throw new CliError("BAD_RESPONSE", "the server's token list is not an array");
    return list as TokenInfo[];
  }

  async revokeToken(id: string): Promise<void> {
    await this.request("DELETE", `/api/tokens/${encodeURIComponent(id)}`, undefined, `no token ${id}`);
  }

  private async json<T>(method: string, path: string, body?: unknown, notFound?: string): Promise<T> {
    const res = await this.request(method, path, body, notFound);
    try {
      return (await res.json()) as T;
    } catch {
      throw new CliError("BAD_RESPONSE", `${method} ${path}: the server's answer is not JSON`);
    }
  }

  private async request(method: string, path: string, body: unknown, notFound?: string): Promise<Response> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.options.token}` };
    if (body !== undefined) headers["content-type"] = "application/json";
    let res: Response;
    try {
      res = await fetch(this.options.url + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        redirect: "manual",
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (err) {
      throw unreachable(this.options.url, err);
    }
    if (res.ok) return res;
    throw await httpError(res, method, path, notFound);
  }
}

function unreachable(url: string, err: unknown): CliError {
  const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).name;
  const why = cause === "ECONNREFUSED" ? "nothing is listening there" : cause === "TimeoutError" ? "it did not answer in time" : String(cause);
  return new CliError("SERVER_UNREACHABLE", `cannot reach the webmux server at ${url} (${why}); start it with \`webmux serve\` or pass --url`);
}

async function httpError(res: Response, method: string, path: string, notFound?: string): Promise<CliError> {
  let message = "";
  let code = "";
  try {
    const body = (await res.json()) as ErrorShape;
    if (typeof body?.error?.message === "string") message = body.error.message;
    if (typeof body?.error?.code === "string") code = body.error.code;
  } catch {
    // not our JSON error shape (a proxy, another program on the port): the status says enough
  }
  switch (res.status) {
    case 401:
      return new CliError("UNAUTHORIZED", "the server refused the token (401): pass the right one with --token or WEBMUX_TOKEN");
    case 403:
      return new CliError("CAPABILITY_DENIED", `not allowed: ${message || "this token lacks the capability"}`);
    case 404:
      return new CliError("NOT_FOUND", notFound ?? (message || `${method} ${path}: not found (is this a webmux server of this version?)`));
    case 409:
      // BUSY (a hybrid session's agent is mid-turn) and CONFLICT share the status; the body's code tells them apart.
      return new CliError(code === "BUSY" ? "BUSY" : "CONFLICT", message || `${method} ${path}: the server refused the request (409)`);
    case 400:
    case 413:
      return new CliError("INVALID_REQUEST", message || `${method} ${path}: the server refused the request (${res.status})`);
    default:
      return new CliError("SERVER_ERROR", `${method} ${path}: the server answered ${res.status}${message ? `: ${message}` : ""}`);
  }
}
