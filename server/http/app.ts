import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { ErrorCode } from "../contract/types.ts";
import { Authenticator, clientAddress, type Authenticated } from "./auth.ts";
import type { CredentialKind } from "./failure-throttle.ts";
import { expectObject, readJson, requiredString } from "./body.ts";
import { answerSocket, ApiError, sendError, toApiError } from "./errors.ts";
import { DEFAULT_HTTP_LIMITS, LARGE_RESPONSE_BYTES, responseDeadlineMs, type HttpLimits } from "./http-limits.ts";
import { parseRequestTarget } from "./request-target.ts";
import { StaticFiles } from "./static.ts";

export type RouteContext = {
  req: IncomingMessage;
  res: ServerResponse;
  params: Record<string, string>;
  url: URL;
  auth: Authenticated;
};

/** What a public route (login, the hybrid hook with its session secret) gets: no principal. */
export type PublicRouteContext = Omit<RouteContext, "auth"> & { auth: null };

/** A handler returns a value to send as JSON (status 200 unless it sets one), or answers `res` itself. */
export type RouteHandler = (ctx: RouteContext) => Promise<unknown> | unknown;

export type PublicRouteHandler = (ctx: PublicRouteContext) => Promise<unknown> | unknown;

export type Route = { method: string; pattern: RegExp; keys: string[] } & (
  | { credential: "required"; handler: RouteHandler }
  | { credential: "none"; handler: PublicRouteHandler }
);

/** A WebSocket endpoint: called after authentication; it must complete or refuse the upgrade. */
export type UpgradeHandler = (req: IncomingMessage, socket: Duplex, head: Buffer, ctx: { params: Record<string, string>; url: URL; auth: Authenticated }) => void;

type UpgradeRoute = { pattern: RegExp; keys: string[]; handler: UpgradeHandler };

/** Methods a cross-site page could use to change state; a cookie-authenticated one must come from our origin. */
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** `GET /api/health`: the server answers requests. */
export type HealthResponse = { status: "ok" };

/** Marks a handler result as "answered already" (e.g. streamed, 204). */
export const HANDLED = Symbol("handled");

export class JsonResponse {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: Record<string, string> = {},
  ) {}
}

function compile(path: string): { pattern: RegExp; keys: string[] } {
  const keys: string[] = [];
  const source = path.replace(/:([a-zA-Z]+)/g, (_, key: string) => {
    keys.push(key);
    return "([^/]+)";
  });
  return { pattern: new RegExp(`^${source}$`), keys };
}

/** A malformed %-escape stays as written: it then simply names nothing. */
function safeDecode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/**
 * End `res` with `body`. An answer too large for the socket's buffers is pinned in memory until
 * the client reads it, so it gets a deadline (its size at a slow link's rate): a client that does
 * not read loses its connection instead of holding the copy (docs/design.md, Hardening and limits).
 */
export function endWithDeadline(res: ServerResponse, body: Uint8Array | string, limits: HttpLimits = DEFAULT_HTTP_LIMITS): void {
  res.end(body);
  const bytes = typeof body === "string" ? Buffer.byteLength(body) : body.byteLength;
  if (bytes < LARGE_RESPONSE_BYTES || res.writableFinished) return;
  const timer = setTimeout(() => res.destroy(), responseDeadlineMs(limits, bytes));
  timer.unref();
  res.once("finish", () => clearTimeout(timer));
  res.once("close", () => clearTimeout(timer));
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}, limits?: HttpLimits): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text),
    "cache-control": "no-store",
    ...headers,
  });
  endWithDeadline(res, text, limits);
}

/**
 * The answer to a request the HTTP parser refused (the server's `clientError`): 431 for headers
 * past the parser's limit, 408 for a request whose headers or body took too long, 400 for the
 * rest; then the connection closes (docs/design.md, Hardening and limits).
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  // A response already under way on this connection cannot be followed by another.
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (err.code === "ECONNRESET" || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  if (err.code === "HPE_HEADER_OVERFLOW") refuseUpgrade(socket, 431, ErrorCode.PAYLOAD_TOO_LARGE, "request headers too large");
  else if (err.code === "ERR_HTTP_REQUEST_TIMEOUT") refuseUpgrade(socket, 408, ErrorCode.INVALID_REQUEST, "the request took too long to arrive");
  else refuseUpgrade(socket, 400, ErrorCode.INVALID_REQUEST, "malformed HTTP request");
}

/** Refuse a WebSocket handshake with a plain HTTP answer: no upgrade happens. */
export function refuseUpgrade(socket: Duplex, status: number, code: ErrorCode, message: string, headers: Record<string, string> = {}): void {
  answerSocket(socket, status, code, message, headers);
}

/**
 * Routing, authentication and the one error path for every HTTP request and WebSocket handshake.
 * Everything under /api/ and /ws/ needs a credential; the app shell does not.
 */
export class App {
  private readonly routes: Route[] = [];
  private readonly upgrades: UpgradeRoute[] = [];

  constructor(
    readonly auth: Authenticator,
    readonly staticFiles: StaticFiles,
    readonly limits: HttpLimits = DEFAULT_HTTP_LIMITS,
  ) {
    this.publicRoute("POST", "/api/login", (ctx) => this.login(ctx));
    // Without a credential: it says only what the open port and the app shell say already
    // (docs/design.md, Hardening and limits).
    this.publicRoute("GET", "/api/health", (): HealthResponse => ({ status: "ok" }));
    this.route("POST", "/api/logout", (ctx) => {
      const { res } = ctx;
      try {
        this.auth.logOut(ctx.req, ctx.auth);
      } catch (err) {
        throw new ApiError(ErrorCode.INTERNAL_ERROR, `cannot save the logout: ${(err as Error).message}`);
      }
      res.writeHead(204, { "set-cookie": this.auth.logoutCookie(ctx.req), "cache-control": "no-store" });
      res.end();
      return HANDLED;
    });
  }

  route(method: string, path: string, handler: RouteHandler): void {
    this.routes.push({ method, ...compile(path), handler, credential: "required" });
  }

  /** A route answered without the app's credential check: it must check its own. */
  publicRoute(method: string, path: string, handler: PublicRouteHandler): void {
    this.routes.push({ method, ...compile(path), handler, credential: "none" });
  }

  websocket(path: string, handler: UpgradeHandler): void {
    this.upgrades.push({ ...compile(path), handler });
  }

  /** The one error boundary of every HTTP request: nothing a request carries escapes it. */
  handleRequest = (req: IncomingMessage, res: ServerResponse): void => {
    void this.dispatch(req, res).catch((err) => sendError(res, err));
  };

  private async dispatch(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = parseRequestTarget(req.url);
    const path = url.pathname;
    if (path.startsWith("/api/") || path === "/api") {
      await this.dispatchApi(req, res, url);
      return;
    }
    if (path.startsWith("/ws/")) {
      throw new ApiError(ErrorCode.INVALID_REQUEST, "this path takes a WebSocket upgrade");
    }
    if (path === "/" && url.searchParams.has("token")) {
      this.loginByLink(req, res, url);
      return;
    }
    if (!this.staticFiles.serve(req, res, path)) {
      if (!this.staticFiles.available && (path === "/" || path === "/index.html")) {
        res.writeHead(503, { "content-type": "text/plain; charset=utf-8" });
        res.end("webmux: the web client is not built; run `npm run build` (or `npm start`, which builds it)\n");
        return;
      }
      throw new ApiError(ErrorCode.NOT_FOUND, `no such file: ${path}`);
    }
  }

  private async dispatchApi(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    let matchedPath = false;
    for (const route of this.routes) {
      const m = route.pattern.exec(url.pathname);
      if (!m) continue;
      matchedPath = true;
      if (route.method !== req.method) continue;
      const params: Record<string, string> = {};
      route.keys.forEach((k, i) => (params[k] = safeDecode(m[i + 1]!)));
      let result: unknown;
      if (route.credential === "none") result = await route.handler({ req, res, params, url, auth: null });
      else {
        const auth = this.authenticateOrRefuse(req, res);
        if (!auth) return;
        const denial = this.auth.denial(auth.principal);
        if (denial !== null) throw new ApiError(ErrorCode.CAPABILITY_DENIED, denial);
        if (auth.via === "cookie" && !SAFE_METHODS.has(req.method ?? "") && req.headers.origin !== undefined && !this.auth.isSameOrigin(req)) {
          throw new ApiError(ErrorCode.CAPABILITY_DENIED, this.crossOriginMessage(req, "request"));
        }
        result = await route.handler({ req, res, params, url, auth });
      }
      if (result === HANDLED) return;
      if (result instanceof JsonResponse) sendJson(res, result.status, result.body, result.headers, this.limits);
      else sendJson(res, 200, result, {}, this.limits);
      return;
    }
    // Unknown API paths still need a credential first: no probing without one.
    if (!this.authenticateOrRefuse(req, res)) return;
    if (matchedPath) throw new ApiError(ErrorCode.INVALID_REQUEST, `${req.method} is not allowed on ${url.pathname}`, {});
    throw new ApiError(ErrorCode.NOT_FOUND, `no such route: ${req.method} ${url.pathname}`);
  }

  /**
   * Checks a presented credential of `kind` under the failure throttle, in one synchronous step:
   * the check's result, or an ApiError — 429 `RATE_LIMITED` with `Retry-After` when the address
   * must wait (the credential is then not checked at all), 401 when it was wrong (counted).
   */
  checkCredential<T>(req: IncomingMessage, kind: CredentialKind, check: () => T | null, wrong: string): T | ApiError {
    const address = clientAddress(req);
    const wait = this.auth.throttle.wait(kind, address);
    if (wait !== null) {
      const seconds = Math.max(1, Math.ceil(wait / 1000));
      return new ApiError(ErrorCode.RATE_LIMITED, `too many failed attempts from this address; try again in ${seconds} s`, { "retry-after": String(seconds) });
    }
    const result = check();
    if (result !== null) return result;
    this.auth.throttle.fail(kind, address);
    return new ApiError(ErrorCode.UNAUTHORIZED, wrong, kind === "hook" ? {} : { "www-authenticate": "Bearer" });
  }

  /** Authenticates the request's Bearer token or cookie, or says why not (a missing credential is not a guess: 401, uncounted). */
  private authenticateRequest(req: IncomingMessage): Authenticated | ApiError {
    const kind = this.auth.credentialKind(req);
    if (kind === null) return new ApiError(ErrorCode.UNAUTHORIZED, "missing or invalid credential", { "www-authenticate": "Bearer" });
    return this.checkCredential(req, kind, () => this.auth.authenticate(req), "missing or invalid credential");
  }

  /** Authenticates, or answers 401 or 429 and returns null. */
  private authenticateOrRefuse(req: IncomingMessage, res: ServerResponse): Authenticated | null {
    const auth = this.authenticateRequest(req);
    if (auth instanceof ApiError) {
      sendError(res, auth);
      return null;
    }
    return auth;
  }

  private async login({ req, res }: PublicRouteContext): Promise<symbol> {
    const body = expectObject(await readJson(req));
    const token = requiredString(body, "token", 512);
    const principal = this.checkCredential(req, "token", () => this.auth.resolveToken(token), "wrong token");
    if (principal instanceof ApiError) throw principal;
    res.writeHead(204, { "set-cookie": this.auth.loginCookie(principal, req), "cache-control": "no-store" });
    res.end();
    return HANDLED;
  }

  /** `GET /?token=…`: the login link printed at start. Sets the cookie and sends the browser to a clean URL. */
  private loginByLink(req: IncomingMessage, res: ServerResponse, url: URL): void {
    const token = url.searchParams.get("token") ?? "";
    const principal = this.checkCredential(req, "token", () => this.auth.resolveToken(token), "wrong token");
    const redirect = (extra: Record<string, string>) => {
      res.writeHead(302, { location: "/", "cache-control": "no-store", "referrer-policy": "no-referrer", ...extra });
      res.end();
    };
    // A wrong or throttled link lands on the login page, without a cookie.
    if (principal instanceof ApiError) {
      redirect({});
      return;
    }
    redirect({ "set-cookie": this.auth.loginCookie(principal, req) });
  }

  /** Why a cookie request from another origin was refused; names the likely fix when a proxy is in front. */
  private crossOriginMessage(req: IncomingMessage, what: string): string {
    const proxied = req.headers.forwarded !== undefined || req.headers["x-forwarded-proto"] !== undefined || req.headers["x-forwarded-host"] !== undefined;
    const hint = proxied && !this.auth.trustProxy ? " (behind a reverse proxy? start webmux serve with --trust-proxy)" : "";
    return `cross-origin ${what} refused${hint}`;
  }

  handleUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    socket.on("error", () => socket.destroy());
    let url: URL;
    try {
      url = parseRequestTarget(req.url);
    } catch (err) {
      const { status, code, message } = toApiError(err);
      refuseUpgrade(socket, status, code, message);
      return;
    }
    try {
      const auth = this.authenticateRequest(req);
      if (auth instanceof ApiError) {
        refuseUpgrade(socket, auth.status, auth.code, auth.message, auth.headers);
        return;
      }
      if (auth.via === "cookie" && !this.auth.isSameOrigin(req)) {
        refuseUpgrade(socket, 403, ErrorCode.CAPABILITY_DENIED, this.crossOriginMessage(req, "WebSocket"));
        return;
      }
      const denial = this.auth.denial(auth.principal);
      if (denial !== null) {
        refuseUpgrade(socket, 403, ErrorCode.CAPABILITY_DENIED, denial);
        return;
      }
      for (const route of this.upgrades) {
        const m = route.pattern.exec(url.pathname);
        if (!m) continue;
        const params: Record<string, string> = {};
        route.keys.forEach((k, i) => (params[k] = safeDecode(m[i + 1]!)));
        route.handler(req, socket, head, { params, url, auth });
        return;
      }
      refuseUpgrade(socket, 404, ErrorCode.NOT_FOUND, `no WebSocket endpoint at ${url.pathname}`);
    } catch (err) {
      console.error("webmux: upgrade failed:", err);
      refuseUpgrade(socket, 400, ErrorCode.INVALID_REQUEST, "bad upgrade request");
    }
  };
}
