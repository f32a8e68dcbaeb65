#!/usr/bin/env node
// Agent hook relay: `hook-relay.mjs <Event>`, run by the agent (Claude Code `--settings` hooks)
// with the hook's JSON on stdin. Posts {event, payload} to the webmux server that started the
// agent, authenticated by the session's hook secret from the environment. It prints nothing
// (a UserPromptSubmit or SessionStart hook's stdout would join the conversation) and always exits
// 0, so a server that is gone never blocks the agent.

import { readFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";

/** The agent waits on this hook; a server that does not answer within this long is skipped. */
const POST_TIMEOUT_MS = 3000;
/** stdin that never ends (a misbehaving caller) is cut off after this long. */
const STDIN_TIMEOUT_MS = 2000;

const event = process.argv[2] ?? "";
// The file (when set) names the server that runs now: it outlives the one that started the agent.
const url = urlFromFile(process.env.WEBMUX_HYBRID_URL_FILE) ?? process.env.WEBMUX_HYBRID_URL;
const secret = process.env.WEBMUX_HYBRID_SECRET;
const session = process.env.WEBMUX_SESSION;

function urlFromFile(path) {
  if (!path) return null;
  try {
    const text = readFileSync(path, "utf8").trim();
    return /^https?:\/\/[^\s/]+$/.test(text) ? text : null;
  } catch {
    return null;
  }
}

async function readStdin() {
  const chunks = [];
  const timer = setTimeout(() => process.stdin.destroy(), STDIN_TIMEOUT_MS);
  try {
    for await (const chunk of process.stdin) chunks.push(chunk);
  } catch {
    // cut off: use what arrived
  } finally {
    clearTimeout(timer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

async function main() {
  const text = await readStdin();
  if (!url || !secret || !session || !event) return;
  let payload = {};
  try {
    payload = text.trim() ? JSON.parse(text) : {};
  } catch {
    payload = {};
  }
  await post(new URL(`${url}/api/hybrid/${encodeURIComponent(session)}/hook`), JSON.stringify({ event, payload }));
}

/**
 * POST and wait for the answer. Over HTTPS the certificate is not verified: the URL is always the
 * address of the server on this machine that started the agent (traffic to a local address never
 * leaves the host), and the certificate a user gives `--tls-cert` names the machine as phones
 * reach it, rarely 127.0.0.1; the hook secret authenticates the request.
 */
function post(target, body) {
  return new Promise((resolve, reject) => {
    const send = target.protocol === "https:" ? httpsRequest : httpRequest;
    const req = send(target, {
      method: "POST",
      headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body), "x-webmux-hook-secret": secret },
      timeout: POST_TIMEOUT_MS,
      rejectUnauthorized: false,
    });
    req.on("response", (res) => {
      res.resume();
      res.on("end", resolve);
    });
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", reject);
    req.end(body);
  });
}

main().then(
  () => process.exit(0),
  () => process.exit(0),
);
