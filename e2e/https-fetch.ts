/**
 * fetch() for a server with a self-made certificate. Node's fetch takes a CA only through an undici
 * Agent (not a dependency here), and NODE_TLS_REJECT_UNAUTHORIZED would stop checking every
 * certificate in the worker: instead this answers through node:https, trusting exactly `ca`.
 */
import { request } from "node:https";

/** A fetch() that trusts `ca` for https:// URLs (enough of fetch for the fixture and the specs). */
export function fetchTrusting(ca: Buffer): typeof fetch {
  return async (input, init = {}) => {
    const url = input instanceof Request ? input.url : String(input);
    if (!url.startsWith("https:")) return fetch(input, init);
    const headers = Object.fromEntries(new Headers(init.headers).entries());
    const body = init.body === undefined || init.body === null ? undefined : Buffer.from(await new Response(init.body).arrayBuffer());
    return new Promise<Response>((resolve, reject) => {
      const req = request(url, { method: init.method ?? "GET", headers, ca, signal: init.signal ?? undefined }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("error", reject);
        res.on("end", () => {
          const answer = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) answer.append(name, one);
          }
          const status = res.statusCode ?? 0;
          const noBody = status === 204 || status === 304 || (status >= 100 && status < 200);
          resolve(new Response(noBody ? null : Buffer.concat(chunks), { status, statusText: res.statusMessage, headers: answer }));
        });
      });
      req.on("error", reject);
      req.end(body);
    });
  };
}
