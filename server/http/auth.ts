import type { IncomingMessage } from "node:http";
import {
  GLOBAL_PRINCIPAL,
  LOGIN_COOKIE,
  LOGIN_COOKIE_MAX_AGE_S,
  LoginCookies,
  parseCookies,
  secretsEqual,
  sha256Hex,
  type AgentPrincipalLookup,
  type AgentTokenResolver,
  type Principal,
} from "./credentials.ts";
import { FailureThrottle } from "./failure-throttle.ts";
import { isHttps, isSameOrigin } from "./forwarded.ts";

export type Authenticated = { principal: Principal; via: "bearer" | "cookie" };

export type AuthOptions = {
  globalToken: string;
  resolveAgentToken?: AgentTokenResolver;
  lookupAgentPrincipal?: AgentPrincipalLookup;
  /** Login cookies logged out of (server side, so a copy stops working too). */
  loggedOut?: { has(cookie: string): boolean; add(cookie: string, until: number): void };
  /** Why a valid credential's principal is refused anyway (403), or null (an agent token while the Agent API is off). */
  denyPrincipal?: (principal: Principal) => string | null;
  /** Believe a reverse proxy's `Forwarded` / `X-Forwarded-Proto` / `X-Forwarded-Host` (`--trust-proxy`). */
  trustProxy?: boolean;
};

/**
 * Turns a request's credential (Bearer token or login cookie) into a principal.
 * Also answers "is this a WebSocket from a foreign page?" for cookie logins.
 */
export class Authenticator {
  readonly throttle = new FailureThrottle();
  private readonly cookies: LoginCookies;

  constructor(private readonly options: AuthOptions) {
    this.cookies = new LoginCookies(options.globalToken);
  }

  /** The principal a raw token stands for: the global token, or a live agent token. */
  resolveToken(token: string): Principal | null {
    if (token.length === 0 || token.length > 512) return null;
    if (secretsEqual(token, this.options.globalToken)) return GLOBAL_PRINCIPAL;
    if (token.startsWith("dnt_") && this.options.resolveAgentToken) return this.options.resolveAgentToken(token);
    return null;
  }

  authenticate(req: IncomingMessage): Authenticated | null {
    const header = req.headers.authorization;
    if (header !== undefined) {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
      const principal = match ? this.resolveToken(match[1]!) : null;
      // A wrong Authorization header is a failure even if a cookie is also present.
      return principal ? { principal, via: "bearer" } : null;
    }
    const cookie = parseCookies(req.headers.cookie).get(LOGIN_COOKIE);
    if (cookie && !this.options.loggedOut?.has(cookie)) {
      const id = this.cookies.verify(cookie);
      const loginCookie = sha256Hex(cookie);
      if (id === "global") return { principal: { ...GLOBAL_PRINCIPAL, loginCookie }, via: "cookie" };
      if (id && this.options.lookupAgentPrincipal) {
        const principal = this.options.lookupAgentPrincipal(id);
        if (principal) return { principal: { ...principal, loginCookie }, via: "cookie" };
      }
    }
    return null;
  }

  /** Why this authenticated principal may not act (answered 403 CAPABILITY_DENIED), or null. */
  denial(principal: Principal): string | null {
    return this.options.denyPrincipal?.(principal) ?? null;
  }

  /** Which kind of credential the request presents (the one `authenticate` checks), or null for none: a missing one is not a guess. */
  credentialKind(req: IncomingMessage): "token" | "cookie" | null {
    if (req.headers.authorization !== undefined) return "token";
    return parseCookies(req.headers.cookie).has(LOGIN_COOKIE) ? "cookie" : null;
  }

  /** The login cookie for a response to `req`: `Secure` whenever the browser came over HTTPS. */
  loginCookie(principal: Principal, req: IncomingMessage): string {
    const value = this.cookies.issue(principal.id);
    return `${LOGIN_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${LOGIN_COOKIE_MAX_AGE_S}${this.secure(req)}`;
  }

  /**
   * Log the request's login cookie out for good: remembered until it would expire, so a copy of it
   * stops working too. A request authenticated otherwise has nothing to forget.
   */
  logOut(req: IncomingMessage, auth: Authenticated): void {
    if (auth.via !== "cookie") return;
    const cookie = parseCookies(req.headers.cookie).get(LOGIN_COOKIE);
    if (cookie) this.options.loggedOut?.add(cookie, this.cookies.expiresAt(cookie));
  }

  logoutCookie(req: IncomingMessage): string {
    return `${LOGIN_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0${this.secure(req)}`;
  }

  get trustProxy(): boolean {
    return this.options.trustProxy ?? false;
  }

  /** Whether `req` comes from a page of our own origin (as the browser sees it, proxy included). */
  isSameOrigin(req: IncomingMessage): boolean {
    return isSameOrigin(req, this.options.trustProxy ?? false);
  }

  private secure(req: IncomingMessage): string {
    return isHttps(req, this.options.trustProxy ?? false) ? "; Secure" : "";
  }
}

/** The peer's address (the failure throttle groups it: IPv6 by /64). */
export function clientAddress(req: IncomingMessage): string {
  return req.socket.remoteAddress ?? "unknown";
}
