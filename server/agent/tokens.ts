/**
 * Agent tokens: `dnt_` + 64 hex characters, each with its own capabilities and optional
 * expiry. Only their SHA-256 is stored (in the data dir, written atomically); a presented
 * token is hashed and compared with every stored hash in constant time.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { CAPABILITIES, type Capability, type TokenInfo } from "../contract/types.ts";
import type { Principal } from "../http/credentials.ts";
import { digestsEqual, effectiveCapabilities, sha256Hex } from "../http/credentials.ts";
import { Emitter } from "../session/emitter.ts";
import { JsonFile } from "../store/json-file.ts";

/** `dnt_` and 32 random bytes in hex, as docs/agent-api.md § Tokens and capabilities defines. */
export const AGENT_TOKEN_PATTERN = /^dnt_[0-9a-f]{64}$/;
/** Longest token name: a label in a list. */
export const MAX_TOKEN_NAME_CHARS = 100;
/** Longest lifetime a token may be given (10 years, in seconds): beyond it, ask for no expiry. */
export const MAX_TOKEN_LIFETIME_S = 10 * 365 * 24 * 3600;
/** At most this many tokens: each request compares against all of them. */
export const MAX_TOKENS = 1000;
/** `last_used_at` is written to disk at most this often: a busy agent must not turn every request into a disk write. */
export const LAST_USED_FLUSH_MS = 60_000;

type StoredToken = {
  id: string;
  name: string;
  capabilities: Capability[];
  token_sha256: string;
  created_at: number;
  expires_at: number | null;
  last_used_at: number | null;
};

type TokenFile = { version: 1; tokens: StoredToken[] };

export class TokenStoreError extends Error {}

export class AgentTokenStore {
  /** `revoked`: a token was deleted (live connections using it should close). */
  readonly events = new Emitter<{ revoked: [id: string] }>();
  private readonly file: JsonFile<TokenFile>;
  private tokens: StoredToken[];
  private flushTimer: ReturnType<typeof setTimeout> | null = null;
  /** `last_used_at` changed since the file was written */
  private dirty = false;

  constructor(
    dataDir: string,
    private readonly now: () => number = Date.now,
  ) {
    this.file = new JsonFile<TokenFile>(join(dataDir, "agent-tokens.json"), () => ({ version: 1, tokens: [] }));
    const stored = this.file.read();
    this.tokens = Array.isArray(stored?.tokens) ? stored.tokens.filter(isStoredToken) : [];
  }

  /** Create a token; the secret is returned once and never stored. */
  create(name: string, capabilities: Capability[], expiresInSeconds: number | null): { token: string; info: TokenInfo } {
    if (this.tokens.length >= MAX_TOKENS) throw new TokenStoreError(`at most ${MAX_TOKENS} tokens; delete some first`);
    const token = `dnt_${randomBytes(32).toString("hex")}`;
    const createdAt = this.now();
    const stored: StoredToken = {
      id: `tok_${randomBytes(8).toString("hex")}`,
      name,
      capabilities: CAPABILITIES.filter((c) => capabilities.includes(c)),
      token_sha256: sha256Hex(token),
      created_at: createdAt,
      expires_at: expiresInSeconds === null ? null : createdAt + expiresInSeconds * 1000,
      last_used_at: null,
    };
    this.persist([...this.tokens, stored]);
    return { token, info: toInfo(stored) };
  }

  list(): TokenInfo[] {
    return this.tokens.map(toInfo);
  }

  /** Delete a token; false when there is none with that id. */
  revoke(id: string): boolean {
    const remaining = this.tokens.filter((t) => t.id !== id);
    if (remaining.length === this.tokens.length) return false;
    this.persist(remaining);
    this.events.emit("revoked", id);
    return true;
  }

  /** The principal of a live token (not expired, not revoked), or null. Every stored hash is compared. */
  resolve(token: string): Principal | null {
    if (!AGENT_TOKEN_PATTERN.test(token)) return null;
    const digest = sha256Hex(token);
    let found: StoredToken | null = null;
    for (const t of this.tokens) if (digestsEqual(digest, t.token_sha256) && found === null) found = t;
    if (!found || this.expired(found)) return null;
    found.last_used_at = this.now();
    this.dirty = true;
    this.scheduleFlush();
    return principalOf(found);
  }

  /** The principal of a live token by id (a login cookie names it; the token may since be gone). */
  lookup(id: string): Principal | null {
    const found = this.tokens.find((t) => t.id === id);
    return found && !this.expired(found) ? principalOf(found) : null;
  }

  /** Whether the principal's token still exists and has not expired. */
  isLive(principal: Principal): boolean {
    return principal.kind === "global" || this.lookup(principal.id) !== null;
  }

  /** What became of the token with this id: still usable, deleted (or never issued), or past its expiry. */
  status(id: string): "live" | "revoked" | "expired" {
    const found = this.tokens.find((t) => t.id === id);
    if (!found) return "revoked";
    return this.expired(found) ? "expired" : "live";
  }

  /** When the token with this id expires (ms since the epoch), or null for never (or no such token). */
  expiresAt(id: string): number | null {
    return this.tokens.find((t) => t.id === id)?.expires_at ?? null;
  }

  /** The clock expiry is judged by. */
  time(): number {
    return this.now();
  }

  /** Write pending `last_used_at` updates now (server shutdown). */
  flush(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    if (!this.dirty) return;
    try {
      this.file.write({ version: 1, tokens: this.tokens });
      this.dirty = false;
    } catch (err) {
      console.error("webmux: cannot save agent tokens:", (err as Error).message);
    }
  }

  private expired(t: StoredToken): boolean {
    return t.expires_at !== null && this.now() >= t.expires_at;
  }

  private persist(next: StoredToken[]): void {
    this.file.write({ version: 1, tokens: next }); // throws, changing nothing, when the disk refuses
    this.tokens = next;
    this.dirty = false;
  }

  private scheduleFlush(): void {
    if (this.flushTimer) return;
    this.flushTimer = setTimeout(() => this.flush(), LAST_USED_FLUSH_MS);
    this.flushTimer.unref?.();
  }
}

function principalOf(t: StoredToken): Principal {
  return { kind: "agent", id: t.id, capabilities: effectiveCapabilities(t.capabilities) };
}

function toInfo(t: StoredToken): TokenInfo {
  return {
    id: t.id,
    name: t.name,
    capabilities: [...t.capabilities],
    created_at: t.created_at,
    expires_at: t.expires_at,
    last_used_at: t.last_used_at,
  };
}

function isStoredToken(value: unknown): value is StoredToken {
  const t = value as StoredToken;
  return (
    typeof t === "object" &&
    t !== null &&
    typeof t.id === "string" &&
    typeof t.name === "string" &&
    Array.isArray(t.capabilities) &&
    t.capabilities.every((c) => CAPABILITIES.includes(c)) &&
    typeof t.token_sha256 === "string" &&
    /^[0-9a-f]{64}$/.test(t.token_sha256) &&
    typeof t.created_at === "number" &&
    (t.expires_at === null || typeof t.expires_at === "number")
  );
}
