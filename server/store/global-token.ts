import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { JsonFile } from "./json-file.ts";

type StoredToken = { token: string; created_at: number };

/** A new global token: 24 random bytes, base64url (32 characters). */
export function generateGlobalToken(): string {
  return randomBytes(24).toString("base64url");
}

/**
 * The global token: given by the user, or generated on first start and kept in the data dir
 * (mode 0600) so login links and scripts keep working across restarts.
 */
export function loadGlobalToken(dataDir: string, given: string | null): { token: string; generated: boolean } {
  if (given) return { token: given, generated: false };
  const file = new JsonFile<StoredToken | null>(join(dataDir, "global-token.json"), () => null);
  const stored = file.read();
  if (stored && typeof stored.token === "string" && stored.token.length >= 16) return { token: stored.token, generated: false };
  const token = generateGlobalToken();
  file.write({ token, created_at: Date.now() });
  return { token, generated: true };
}

/** Read the token a local server keeps (for CLI commands talking to it). */
export function readStoredGlobalToken(dataDir: string): string | null {
  try {
    const stored = new JsonFile<StoredToken | null>(join(dataDir, "global-token.json"), () => null).read();
    return stored?.token ?? null;
  } catch {
    return null;
  }
}
