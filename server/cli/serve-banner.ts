import { networkInterfaces } from "node:os";
import QRCode from "qrcode";

/** What `webmux serve` says at start, besides the one `listening on` line. */
export type BannerInput = { url: string; host: string; token: string; tls: boolean; trustProxy: boolean };

const WILDCARD_HOSTS = new Set(["0.0.0.0", "::", "[::]"]);

/** Addresses only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, "").toLowerCase();
  return bare === "localhost" || bare === "::1" || /^127(?:\.\d{1,3}){3}$/.test(bare);
}

function withHost(url: string, host: string): string {
  const parsed = new URL(url);
  parsed.hostname = host.includes(":") ? `[${host}]` : host;
  return parsed.origin;
}

function loginLink(origin: string, token: string): string {
  return `${origin}/?token=${encodeURIComponent(token)}`;
}

/** The login link for a browser on this machine (a wildcard bind is reached over loopback). */
export function localLoginLink({ url, host, token }: BannerInput): string {
  return loginLink(WILDCARD_HOSTS.has(host) ? withHost(url, "127.0.0.1") : url, token);
}

/** The first address another device on the network can use, when listening on every interface. */
function lanAddress(): string | null {
  for (const addresses of Object.values(networkInterfaces())) {
    for (const a of addresses ?? []) if (a.family === "IPv4" && !a.internal) return a.address;
  }
  return null;
}

/**
 * The login link a phone should open: for a wildcard bind, the machine's LAN address (a QR of
 * 127.0.0.1 would send the phone to itself); otherwise the address the server listens on.
 */
export function phoneLoginLink(input: BannerInput, lan: string | null = lanAddress()): string {
  if (WILDCARD_HOSTS.has(input.host) && lan) return loginLink(withHost(input.url, lan), input.token);
  return localLoginLink(input);
}

/**
 * The warning for a server other machines can reach, or null. Plain HTTP on the network exposes the
 * token and every keystroke, and browsers refuse service workers (so no installed PWA) off loopback
 * without HTTPS. Behind a trusting proxy the port itself should stay on loopback, because whoever
 * reaches it directly can claim to be the proxy.
 */
export function exposureWarning({ host, tls, trustProxy }: BannerInput): string | null {
  if (tls || isLoopbackHost(host)) return null;
  if (trustProxy) {
    return `webmux: warning: --trust-proxy while listening on ${host}: anyone who reaches this port directly can forge the proxy's headers; listen on 127.0.0.1 behind the proxy`;
  }
  return `webmux: warning: listening on ${host} over plain HTTP: the token and terminal traffic cross the network unencrypted and phones cannot install the app; use --tls-cert/--tls-key, or an HTTPS reverse proxy with --trust-proxy`;
}

/** The login link as a QR code for a terminal, with a caption saying where it leads (not the token). */
export async function loginQrCode(link: string): Promise<string> {
  const qr = await QRCode.toString(link, { type: "terminal", small: true });
  return `${qr}\nscan to log in from a phone: ${new URL(link).origin}\n`;
}
