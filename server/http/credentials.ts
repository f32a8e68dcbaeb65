import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { Capability } from "../contract/types.ts";
import { CAPABILITIES } from "../contract/types.ts";

/** Who a request acts for, and what it may do. */
export type Principal = {
  kind: "global" | "agent";
  /** "global", or the agent token's id */
  id: string;
  capabilities: ReadonlySet<Capability>;
  /** SHA-256 of the login cookie it came with, for a browser login: logging that cookie out ends its sockets */
  loginCookie?: string;
};

/**
 * What a token granted `capabilities` may do: `terminal:write` implies `terminal:read`, since whoever
 * may type into a shell (or `run`, which answers with the output) can read it anyway
 * (docs/design.md, Authentication and credentials).
 */
export function effectiveCapabilities(capabilities: Iterable<Capability>): Set<Capability> {
  const out = new Set(capabilities);
  if (out.has("terminal:write")) out.add("terminal:read");
  return out;
}

export const GLOBAL_PRINCIPAL: Principal = { kind: "global", id: "global", capabilities: new Set(CAPABILITIES) };

export function can(principal: Principal, capability: Capability): boolean {
  return principal.capabilities.has(capability);
}

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** Constant-time equality of two secrets of any length: compare their digests. */
export function secretsEqual(a: string, b: string): boolean {
  const da = createHash("sha256").update(a).digest();
  const db = createHash("sha256").update(b).digest();
  return timingSafeEqual(da, db);
}

/** Constant-time equality of two hex digests. */
export function digestsEqual(aHex: string, bHex: string): boolean {
  const a = Buffer.from(aHex, "hex");
  const b = Buffer.from(bHex, "hex");
  return a.length === b.length && a.length > 0 && timingSafeEqual(a, b);
}

/** Resolves an agent token (`dnt_…`) to its principal; supplied by the Agent API's token store. */
export type AgentTokenResolver = (token: string) => Principal | null;
/** Looks an agent principal up again by id (a cookie names its principal; the token may since be revoked). */
export type AgentPrincipalLookup = (id: string) => Principal | null;

/** Browser logins stay valid this long. */
export const LOGIN_COOKIE_MAX_AGE_S = 30 * 24 * 3600;
export const LOGIN_COOKIE = "webmux_session";

/**
 * Login cookies are stateless and survive server restarts: `v1.<principal>.<issuedAt>.<mac>`, the MAC keyed
 * by a secret derived from the global token, so changing the global token logs every browser out.
 */
export class LoginCookies {
  private readonly key: Buffer;
  constructor(globalToken: string) {
    this.key = createHash("sha256").update("webmux-login-cookie\0" + globalToken).digest();
  }

  issue(principalId: string, now = Date.now()): string {
    const payload = `v1.${principalId}.${now}`;
    return `${payload}.${this.mac(payload)}`;
  }

  /** The principal id the cookie names, or null when it is forged, malformed or expired. */
  verify(value: string, now = Date.now()): string | null {
    const parts = value.split(".");
    if (parts.length !== 4 || parts[0] !== "v1") return null;
    const [, principalId, issued, mac] = parts as [string, string, string, string];
    if (!/^\d{1,16}$/.test(issued) || !/^[A-Za-z0-9_-]{1,64}$/.test(principalId)) return null;
    const expected = this.mac(`v1.${principalId}.${issued}`);
    if (mac.length !== expected.length || !timingSafeEqual(Buffer.from(mac), Buffer.from(expected))) return null;
    const age = now - Number(issued);
    if (age < -60_000 || age > LOGIN_COOKIE_MAX_AGE_S * 1000) return null;
    return principalId;
  }

  /** When a cookie `verify` accepts stops being valid by itself (ms since the epoch). */
  expiresAt(value: string): number {
    return Number(value.split(".")[2]) + LOGIN_COOKIE_MAX_AGE_S * 1000;
  }

  private mac(payload: string): string {
    return createHmac("sha256", this.key).update(payload).digest("base64url");
  }
}

export function parseCookies(header: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (!header) return out;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq === -1) continue;
    const name = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (name && !out.has(name)) out.set(name, value);
  }
  return out;
}
