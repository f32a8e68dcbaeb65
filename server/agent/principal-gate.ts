/**
 * Whether a principal may still act: an agent token exists, has not expired, and the Agent API
 * is on; a browser login has not been logged out. The HTTP layer asks it for every request and handshake, the WebSocket acceptor for every
 * open socket and every client frame (docs/design.md, Authentication and credentials).
 */
import { PolicyCloseReason } from "../contract/protocol.ts";
import type { Principal } from "../http/credentials.ts";
import type { SettingsStore } from "../store/settings.ts";
import type { AgentTokenStore } from "./tokens.ts";

/** The close reasons (with code 1008) of a socket whose principal may no longer act. */
export const { REVOKED: CREDENTIAL_REVOKED, EXPIRED: CREDENTIAL_EXPIRED, AGENT_API_DISABLED, LOGGED_OUT } = PolicyCloseReason;

export class PrincipalGate {
  constructor(
    private readonly tokens: AgentTokenStore,
    private readonly settings: SettingsStore,
    private readonly loggedOut: { hasDigest(sha256: string): boolean } | null = null,
  ) {}

  /** Why the principal may not act now (a close reason), or null while it may. The global token always may. */
  closeReason(principal: Principal): string | null {
    if (principal.loginCookie !== undefined && this.loggedOut?.hasDigest(principal.loginCookie)) return LOGGED_OUT;
    if (principal.kind === "global") return null;
    const status = this.tokens.status(principal.id);
    if (status === "revoked") return CREDENTIAL_REVOKED;
    if (status === "expired") return CREDENTIAL_EXPIRED;
    if (!this.settings.get().open_api.enabled) return AGENT_API_DISABLED;
    return null;
  }

  /**
   * Why an authenticated principal is refused (403) although its credential is valid: an agent
   * token while the Agent API is off. Revoked and expired tokens never authenticate (401).
   */
  denial(principal: Principal): string | null {
    if (principal.kind === "global" || this.settings.get().open_api.enabled) return null;
    return "the Agent API is disabled, and agent tokens with it (enable open_api in the settings, or start with --open-api)";
  }

  /** How long until the principal's credential runs out (ms), or null when it never does. */
  msUntilExpiry(principal: Principal): number | null {
    if (principal.kind === "global") return null;
    const at = this.tokens.expiresAt(principal.id);
    return at === null ? null : Math.max(0, at - this.tokens.time());
  }
}
