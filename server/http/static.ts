import { createReadStream, existsSync, statSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { extname, join, normalize, sep } from "node:path";
import { requestOrigin } from "./forwarded.ts";

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".webmanifest": "application/manifest+json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
  ".txt": "text/plain; charset=utf-8",
  ".map": "application/json; charset=utf-8",
};

/** Hashed build assets never change under the same name: let browsers keep them for a year. */
const IMMUTABLE_CACHE = "public, max-age=31536000, immutable";

/**
 * Security headers for the app shell: no framing, no sniffing, no referrer leaking the login token.
 * The page may connect to its own origin only: `'self'` (which covers its WebSockets in current
 * browsers) and, for browsers where it does not, the page's own `ws:`/`wss:` origin by name — never
 * any `ws:` host (docs/design.md, Hardening and limits).
 */
export function shellHeaders(req: IncomingMessage, trustProxy: boolean): Record<string, string> {
  const own = requestOrigin(req, trustProxy);
  const socketOrigin = own.host ? ` ${own.scheme === "https" ? "wss" : "ws"}://${own.host}` : "";
  return {
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "content-security-policy": `default-src 'self'; connect-src 'self'${socketOrigin}; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; script-src 'self'; worker-src 'self'; frame-ancestors 'none'; base-uri 'none'`,
  };
}

/**
 * Serves the built client (the app shell) from `root`. Unknown paths that look like app routes get
 * index.html (the client routes them); paths escaping the root never resolve.
 */
export class StaticFiles {
  constructor(
    readonly root: string,
    /** believe a reverse proxy's forwarding headers about the page's origin (`--trust-proxy`) */
    private readonly trustProxy = false,
  ) {}

  get available(): boolean {
    return existsSync(join(this.root, "index.html"));
  }

  /** Returns false when nothing was served (caller answers 404). */
  serve(req: IncomingMessage, res: ServerResponse, pathname: string): boolean {
    if (req.method !== "GET" && req.method !== "HEAD") return false;
    let decoded: string;
    try {
      decoded = decodeURIComponent(pathname);
    } catch {
      return false;
    }
    if (decoded.includes("\0") || decoded.includes("\\")) return false;
    const rel = normalize(decoded).replace(/^(\.\.(\/|\\|$))+/, "");
    let file = join(this.root, rel);
    if (file !== this.root && !file.startsWith(this.root + sep)) return false;
    let stat = safeStat(file);
    if (stat?.isDirectory()) {
      file = join(file, "index.html");
      stat = safeStat(file);
    }
    if (!stat || !stat.isFile()) {
      // Client-side routes fall back to the shell; missing assets are real 404s.
      if (extname(decoded) !== "") return false;
      file = join(this.root, "index.html");
      stat = safeStat(file);
      if (!stat) return false;
    }
    const ext = extname(file);
    const isHtml = ext === ".html";
    const cache = decoded.startsWith("/assets/") ? IMMUTABLE_CACHE : "no-cache";
    res.writeHead(200, {
      "content-type": CONTENT_TYPES[ext] ?? "application/octet-stream",
      "content-length": stat.size,
      "cache-control": cache,
      ...(isHtml ? shellHeaders(req, this.trustProxy) : { "x-content-type-options": "nosniff" }),
      ...(file.endsWith("sw.js") ? { "service-worker-allowed": "/" } : {}),
    });
    if (req.method === "HEAD") {
      res.end();
      return true;
    }
    createReadStream(file).on("error", () => res.destroy()).pipe(res);
    return true;
  }
}

function safeStat(path: string) {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}
