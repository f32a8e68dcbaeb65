/**
 * The HTTP API as the browser sees it: every call goes through `request`, which turns
 * error bodies into `ApiError`s and reports any 401 once, so the app can show Login.
 * The browser's credential is the HttpOnly `webmux_session` cookie: the client never
 * holds the token after logging in.
 */
import type {
  CreateSessionRequest,
  CreateTokenRequest,
  CreateTokenResponse,
  Settings,
  TokenInfo,
  ErrorBody,
  ErrorCode,
  HybridEnd,
  SessionInfo,
  SessionListResponse,
} from "../../server/contract/types.ts";

/** Failures that never produced a well-formed answer from the server. */
export type ClientErrorCode = "NETWORK" | "BAD_RESPONSE";

export class ApiError extends Error {
  override readonly name = "ApiError";
  /** HTTP status, 0 when the request never got an answer. */
  readonly status: number;
  readonly code: ErrorCode | ClientErrorCode;

  constructor(status: number, code: ErrorCode | ClientErrorCode, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export function isUnauthorized(error: unknown): boolean {
  return error instanceof ApiError && error.code === "UNAUTHORIZED";
}

/** A sentence to show the user; anything that is not an ApiError is a bug and stays generic. */
export function describeError(error: unknown): string {
  if (!(error instanceof ApiError)) return "Something went wrong.";
  if (error.code === "NETWORK") return "Cannot reach the server. Check the connection and try again.";
  return error.message || `The server answered ${error.status}.`;
}

/** `GET /api/sessions/{id}/buffer`: the raw retained ring bytes and where they sit in the stream. */
export type RingBytes = {
  bytes: Uint8Array;
  generation: string;
  start: number;
  end: number;
  /** the earliest output was overwritten: `bytes` does not begin at the program's start */
  truncated: boolean;
};

export type Api = {
  /** Exchanges the token for the session cookie. A wrong token rejects with UNAUTHORIZED. */
  login(token: string): Promise<void>;
  listSessions(): Promise<SessionInfo[]>;
  getSession(id: string): Promise<SessionInfo>;
  createSession(request?: CreateSessionRequest): Promise<SessionInfo>;
  renameSession(id: string, title: string): Promise<SessionInfo>;
  restartSession(id: string): Promise<SessionInfo>;
  /** Move a hybrid session's conversation to `to`; a busy agent rejects with BUSY (409) unless `interrupt`. */
  moveSession(id: string, to: HybridEnd, interrupt: boolean): Promise<SessionInfo>;
  deleteSession(id: string): Promise<void>;
  readBuffer(id: string): Promise<RingBytes>;
  putSettings(settings: Settings): Promise<void>;
  listTokens(): Promise<TokenInfo[]>;
  createToken(request: CreateTokenRequest): Promise<CreateTokenResponse>;
  revokeToken(id: string): Promise<void>;
};

export type ApiOptions = {
  /** Called on every 401 except the login call's own, whose 401 is the answer. */
  onUnauthorized: () => void;
  /** Prefix for every path; the app is served by the server it talks to, so "" by default. */
  baseUrl?: string;
};

type RequestOptions = {
  method?: "GET" | "POST" | "PATCH" | "PUT" | "DELETE";
  body?: unknown;
  reportUnauthorized?: boolean;
};

export function createApi(options: ApiOptions): Api {
  const baseUrl = options.baseUrl ?? "";

  /** The successful response, or the ApiError its failure means. */
  async function respond(path: string, { method = "GET", body, reportUnauthorized = true }: RequestOptions): Promise<Response> {
    const headers: Record<string, string> = { Accept: "application/json" };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    let response: Response;
    try {
      response = await fetch(baseUrl + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        credentials: "same-origin",
      });
    } catch {
      throw new ApiError(0, "NETWORK", "Cannot reach the server.");
    }
    if (!response.ok) {
      const error = await errorFrom(response);
      if (error.code === "UNAUTHORIZED" && reportUnauthorized) options.onUnauthorized();
      throw error;
    }
    return response;
  }

  async function request(path: string, requestOptions: RequestOptions): Promise<unknown> {
    const response = await respond(path, requestOptions);
    if (response.status === 204) return undefined;
    try {
      return await response.json();
    } catch {
      throw new ApiError(response.status, "BAD_RESPONSE", "The server sent an unreadable answer.");
    }
  }

  return {
    async login(token) {
      await request("/api/login", { method: "POST", body: { token }, reportUnauthorized: false });
    },
    async listSessions() {
      const body = (await request("/api/sessions", {})) as SessionListResponse;
      return body.sessions;
    },
    async getSession(id) {
      return (await request(sessionPath(id), {})) as SessionInfo;
    },
    async createSession(createRequest = {}) {
      return (await request("/api/sessions", { method: "POST", body: createRequest })) as SessionInfo;
    },
    async renameSession(id, title) {
      return (await request(sessionPath(id), { method: "PATCH", body: { title } })) as SessionInfo;
    },
    async restartSession(id) {
      return (await request(`${sessionPath(id)}/restart`, { method: "POST" })) as SessionInfo;
    },
    async moveSession(id, to, interrupt) {
      return (await request(`${sessionPath(id)}/move`, { method: "POST", body: { to, interrupt } })) as SessionInfo;
    },
    async deleteSession(id) {
      await request(sessionPath(id), { method: "DELETE" });
    },
    async putSettings(settings) {
      await request("/api/settings", { method: "PUT", body: settings });
    },
    async listTokens() {
      return ((await request("/api/tokens", {})) as { tokens: TokenInfo[] }).tokens;
    },
    async createToken(createRequest) {
      return (await request("/api/tokens", { method: "POST", body: createRequest })) as CreateTokenResponse;
    },
    async revokeToken(id) {
      await request(`/api/tokens/${encodeURIComponent(id)}`, { method: "DELETE" });
    },
    async readBuffer(id) {
      const response = await respond(`${sessionPath(id)}/buffer`, {});
      let bytes: Uint8Array;
      try {
        bytes = new Uint8Array(await response.arrayBuffer());
      } catch {
        throw new ApiError(0, "NETWORK", "The connection broke while reading the buffer.");
      }
      const header = (name: string) => response.headers.get(name) ?? "";
      return {
        bytes,
        generation: header("X-Webmux-Generation"),
        start: Number(header("X-Webmux-Start")) || 0,
        end: Number(header("X-Webmux-End")) || bytes.length,
        truncated: header("X-Webmux-Truncated") === "true",
      };
    },
  };
}

const sessionPath = (id: string): string => `/api/sessions/${encodeURIComponent(id)}`;

async function errorFrom(response: Response): Promise<ApiError> {
  let body: unknown = null;
  try {
    body = await response.json();
  } catch {
    // Not JSON (a proxy's error page, say): fall back on the status below.
  }
  if (response.status === 401) {
    const message = isErrorBody(body) ? body.error.message : "Not logged in.";
    return new ApiError(401, "UNAUTHORIZED", message);
  }
  if (isErrorBody(body)) return new ApiError(response.status, body.error.code, body.error.message);
  return new ApiError(response.status, "BAD_RESPONSE", `The server answered ${response.status}.`);
}

function isErrorBody(body: unknown): body is ErrorBody {
  if (typeof body !== "object" || body === null || !("error" in body)) return false;
  const error = (body as { error: unknown }).error;
  return (
    typeof error === "object" &&
    error !== null &&
    typeof (error as { code?: unknown }).code === "string" &&
    typeof (error as { message?: unknown }).message === "string"
  );
}
