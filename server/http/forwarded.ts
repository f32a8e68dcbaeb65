import type { IncomingMessage } from "node:http";
import type { TLSSocket } from "node:tls";

/**
 * Where the browser thinks it is: the scheme and host of the address it typed. Directly, that is the
 * connection's own (TLS or not) and the Host header. Behind a reverse proxy that terminates TLS
 * (Caddy, nginx, `tailscale serve`), the connection is plain HTTP from the proxy, so only the
 * proxy's `Forwarded` / `X-Forwarded-Proto` / `X-Forwarded-Host` headers tell the truth — and only
 * when the operator said a proxy is there (`--trust-proxy`); otherwise anyone could forge them.
 */
export type RequestOrigin = { scheme: "http" | "https"; host: string | null };

/** A host as a Host header may carry it: name or IPv4, or a bracketed IPv6, and an optional port. */
const HOST_PATTERN = /^(?:[a-z0-9._~-]+|\[[0-9a-f:.]+\])(?::\d{1,5})?$/i;

function validHost(value: string | undefined): string | null {
  if (value === undefined) return null;
  const host = value.trim();
  return HOST_PATTERN.test(host) ? host : null;
}

function validScheme(value: string | undefined): "http" | "https" | null {
  const scheme = value?.trim().toLowerCase();
  return scheme === "http" || scheme === "https" ? scheme : null;
}

/** A header that may be repeated or comma-joined: its first value, the one the first proxy wrote. */
function firstValue(header: string | string[] | undefined): string | undefined {
  const joined = Array.isArray(header) ? header[0] : header;
  return joined?.split(",")[0];
}

/** RFC 7239: `Forwarded: for=…;proto=https;host=example.com, for=…` — the first element's pairs. */
export function parseForwarded(header: string | string[] | undefined): { proto?: string; host?: string } {
  const first = firstValue(header);
  if (first === undefined) return {};
  const out: { proto?: string; host?: string } = {};
  for (const pair of first.split(";")) {
    const eq = pair.indexOf("=");
    if (eq === -1) continue;
    const key = pair.slice(0, eq).trim().toLowerCase();
    let value = pair.slice(eq + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    if (key === "proto") out.proto = value;
    else if (key === "host") out.host = value;
  }
  return out;
}

/** The scheme and host the browser used. Forwarding headers count only with `trustProxy`. */
export function requestOrigin(req: IncomingMessage, trustProxy: boolean): RequestOrigin {
  const direct: RequestOrigin = {
    scheme: (req.socket as Partial<TLSSocket>).encrypted ? "https" : "http",
    host: validHost(req.headers.host),
  };
  if (!trustProxy) return direct;
  const forwarded = parseForwarded(req.headers.forwarded);
  const scheme = validScheme(forwarded.proto) ?? validScheme(firstValue(req.headers["x-forwarded-proto"]));
  const host = validHost(forwarded.host) ?? validHost(firstValue(req.headers["x-forwarded-host"]));
  return { scheme: scheme ?? direct.scheme, host: host ?? direct.host };
}

/** Whether the browser reached us over HTTPS (direct TLS, or a trusted proxy that says so). */
export function isHttps(req: IncomingMessage, trustProxy: boolean): boolean {
  return requestOrigin(req, trustProxy).scheme === "https";
}

/**
 * A cookie-authenticated request must come from our own page (cross-site WebSocket hijacking,
 * cross-site requests): its Origin must be exactly the scheme and host the browser used to reach us.
 */
export function isSameOrigin(req: IncomingMessage, trustProxy: boolean): boolean {
  const origin = req.headers.origin;
  const own = requestOrigin(req, trustProxy);
  if (!origin || !own.host) return false;
  try {
    const theirs = new URL(origin);
    // Through URL, so a default port written out (`example.com:443`) compares equal to none.
    const ours = new URL(`${own.scheme}://${own.host}`);
    return theirs.protocol === ours.protocol && theirs.host === ours.host;
  } catch {
    return false;
  }
}
