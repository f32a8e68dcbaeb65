import { ApiError, invalid } from "./errors.ts";

/** The base every request path is resolved against: only path and query of a target matter. */
const BASE = "http://localhost";

/**
 * The path and query of a request line's target, or a 400 for one that names no path of ours.
 * Origin form (`/a/b?c`) is the path; absolute form (`http://host/a`) keeps its path and query and
 * drops its host. Everything else gets 400: authority form (`host:port`, CONNECT), asterisk form
 * (`*`), a path starting with `//` (a URL parser reads a host there, so `//[` and `//evil/x` name
 * no path of ours) and whatever the URL parser refuses (`http://[`, `http://a%zz/`, `http://:80/`,
 * `http://a:99999/`). Called once per request and handshake, inside the app's error handling
 * (docs/design.md, Hardening and limits).
 */
export function parseRequestTarget(target: string | undefined): URL {
  const raw = target ?? "/";
  try {
    if (raw.startsWith("/") && !raw.startsWith("//")) return new URL(BASE + raw);
    if (/^https?:\/\//i.test(raw)) {
      const absolute = new URL(raw);
      return new URL(BASE + absolute.pathname + absolute.search);
    }
  } catch {
    // falls through to the 400
  }
  throw unparsableTarget();
}

function unparsableTarget(): ApiError {
  return invalid("the request target is not a path this server can parse");
}
