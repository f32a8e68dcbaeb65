import type { IncomingMessage } from "node:http";
import {
  GLOBAL_PRINCIPAL,
  LOGIN_COOKIE,
  LOGIN_COOKIE_MAX_AGE_S,
  LoginCookies,
  parseCookies,
  secretsEqual,
  type AgentPrincipalLookup,
  type AgentTokenResolver,
  type Principal,
} from "./credentials.ts";
import { FailureThrottle } from "./failure-throttle.ts";

export type Authenticated = { principal: Principal; via: "bearer" | "cookie" };

export type AuthOptions = {
  globalToken: string;
  resolveAgentToken?: AgentTokenResolver;
  lookupAgentPrincipal?: AgentPrincipalLookup;
  /** Cookies get `Secure` when the server is reached over HTTPS. */
  secureCookies?: boolean;
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
    if (cookie) {
      const id = this.cookies.verify(cookie);
      if (id === "global") return { principal: GLOBAL_PRINCIPAL, via: "cookie" };
      if (id && this.options.lookupAgentPrincipal) {
        const principal = this.options.lookupAgentPrincipal(id);
        if (principal) return { principal, via: "cookie" };
      }
    }
    return null;
  }

  /** Whether the request carried any credential at all (a missing one is not a guess). */
  hasCredential(req: IncomingMessage): boolean {
    return req.headers.authorization !== undefined || parseCookies(req.headers.cookie).has(LOGIN_COOKIE);
  }

  loginCookie(principal: Principal): string {
    const value = this.cookies.issue(principal.id);
    const secure = this.options.secureCookies ? "; Secure" : "";
    return `${LOGIN_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${LOGIN_COOKIE_MAX_AGE_S}${secure}`;
  }

  logoutCookie(): string {
    const secure = this.options.secureCookies ? "; Secure" : "";
    return `${LOGIN_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0${secure}`;
  }
}

/** The address failures are counted against. */
export function clientAddress(req: IncomingMessage): string {
  return req.socket.remoteAddress ?? "unknown";
}

/**
 * A cookie-authenticated WebSocket must come from our own page (cross-site WebSocket hijacking):
 * its Origin must name the host the request was sent to.
 */
export function isSameOrigin(req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  const host = req.headers.host;
  if (!origin || !host) return false;
  try {
    const url = new URL(origin);
    return (url.protocol === "http:" || url.protocol === "https:") && url.host.toLowerCase() === host.toLowerCase();
  } catch {
    return false;
  }
}
