/**
 * Login cookies their browser logged out with. A login cookie is stateless (it survives restarts),
 * so logging out must remember it until it would have expired anyway, or a copy of it would keep
 * working (docs/design.md, Authentication and credentials). Only SHA-256 digests are kept, in the
 * data dir, written atomically.
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import { Emitter } from "../session/emitter.ts";
import { JsonFile } from "./json-file.ts";

/** Remembered at most: a logout needs a valid cookie, so only the owner's own logins fill it; past it the oldest go first. */
export const MAX_LOGGED_OUT_COOKIES = 10_000;

type Entry = { sha256: string; until: number };
type StoredFile = { version: 1; cookies: Entry[] };

function digest(cookie: string): string {
  return createHash("sha256").update(cookie).digest("hex");
}

export class LoggedOutCookies {
  /** `added`: a cookie was logged out (its open sockets should close). */
  readonly events = new Emitter<{ added: [sha256: string] }>();
  private readonly file: JsonFile<StoredFile>;
  private readonly entries = new Map<string, number>();

  constructor(
    dataDir: string,
    private readonly now: () => number = Date.now,
  ) {
    this.file = new JsonFile<StoredFile>(join(dataDir, "logged-out-cookies.json"), () => ({ version: 1, cookies: [] }));
    const stored = this.file.read();
    const nowMs = this.now();
    for (const e of Array.isArray(stored?.cookies) ? stored.cookies : []) {
      if (typeof e?.sha256 === "string" && /^[0-9a-f]{64}$/.test(e.sha256) && typeof e.until === "number" && e.until > nowMs) this.entries.set(e.sha256, e.until);
    }
  }

  has(cookie: string): boolean {
    return this.hasDigest(digest(cookie));
  }

  /** Whether the cookie with this SHA-256 was logged out. */
  hasDigest(sha256: string): boolean {
    const until = this.entries.get(sha256);
    return until !== undefined && until > this.now();
  }

  /** Remember `cookie` as logged out until `until` (when it would expire by itself); throws, changing nothing, when the disk refuses. */
  add(cookie: string, until: number): void {
    const next = new Map(this.entries);
    const nowMs = this.now();
    for (const [key, end] of next) if (end <= nowMs) next.delete(key);
    next.set(digest(cookie), until);
    while (next.size > MAX_LOGGED_OUT_COOKIES) next.delete(next.keys().next().value!);
    this.file.write({ version: 1, cookies: [...next].map(([sha256, end]) => ({ sha256, until: end })) });
    this.entries.clear();
    for (const [key, end] of next) this.entries.set(key, end);
    this.events.emit("added", digest(cookie));
  }
}
