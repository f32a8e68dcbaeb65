import type { ControllerInfo } from "../contract/types.ts";

/** One attached connection as the lease sees it. */
export type LeaseConnection = {
  readonly id: number;
  readonly clientId: string;
  readonly label: string;
  /** false for a `terminal:read` credential: an observer that can never take control or write */
  readonly canControl: boolean;
};

/**
 * What the caller must announce after a lease change: `broadcast` → a 0x06 to every connection;
 * `solo` → a 0x06 to that connection alone (it became its client's effective connection and must
 * re-send its size).
 */
export type LeaseEffect = { broadcast: boolean; solo: LeaseConnection | null };

/**
 * Client IDs one session remembers the owner of. Past it, the oldest ID with no connection is
 * forgotten: such a client holds no seat (the seat empties with its last connection).
 */
export const MAX_CLIENT_OWNERS = 1024;

const NONE: LeaseEffect = Object.freeze({ broadcast: false, solo: null }) as LeaseEffect;

/**
 * Who controls a session, by docs/protocol.md § Controller rules:
 * - with no controller, the first client to attach becomes it; the same client reconnecting keeps it;
 * - the controller client's most recently attached connection is its only effective one (duplicated
 *   tabs may share a client ID); when it leaves, another connection of that client that may control
 *   takes over — never a read-only one (docs/design.md, Control);
 * - input, submissions and take-control hand control to the sender;
 * - when the controller's last connection leaves, the seat stays empty (no automatic handover).
 * Pure bookkeeping: the hub turns effects into frames, inside the same synchronous step.
 */
export class ControllerLease {
  private controller: ControllerInfo | null = null;
  private effective: LeaseConnection | null = null;
  /** in attach order, oldest first */
  private readonly connections: LeaseConnection[] = [];
  /** client ID → the principal that first attached with it, oldest first */
  private readonly owners = new Map<string, string>();

  constructor(private readonly now: () => number = Date.now) {}

  get info(): ControllerInfo | null {
    return this.controller;
  }

  get effectiveConnection(): LeaseConnection | null {
    return this.effective;
  }

  get size(): number {
    return this.connections.length;
  }

  /**
   * Whether a connection of principal `owner` may use `clientId`: a client ID belongs to the
   * principal that first attached with it (docs/design.md, Control), so nobody can join another
   * principal's client — be its heir, hear its submission statuses — by copying the ID out of a
   * 0x06 frame. Call before `attach`.
   */
  bindClientId(clientId: string, owner: string): boolean {
    const known = this.owners.get(clientId);
    if (known !== undefined) return known === owner;
    if (this.owners.size >= MAX_CLIENT_OWNERS) {
      for (const id of this.owners.keys()) {
        if (this.connections.some((c) => c.clientId === id)) continue;
        this.owners.delete(id);
        break;
      }
    }
    this.owners.set(clientId, owner);
    return true;
  }

  attach(conn: LeaseConnection): LeaseEffect {
    this.connections.push(conn);
    if (!conn.canControl) return NONE;
    if (this.controller === null) {
      this.seat(conn);
      return { broadcast: true, solo: null };
    }
    if (this.controller.clientId === conn.clientId) {
      // The newest connection of the controlling client is the effective one (it gets the attach's
      // own 0x06, so no solo frame is needed).
      this.effective = conn;
    }
    return NONE;
  }

  detach(conn: LeaseConnection): LeaseEffect {
    const index = this.connections.indexOf(conn);
    if (index === -1) return NONE;
    this.connections.splice(index, 1);
    if (this.effective !== conn) return NONE;
    const heir = this.newestControllingOf(conn.clientId);
    if (heir) {
      this.effective = heir;
      return { broadcast: false, solo: heir };
    }
    this.effective = null;
    this.controller = null;
    return { broadcast: true, solo: null };
  }

  /**
   * A connection sent user input (0x00), a submission (0x03) or take-control (0x05): it takes
   * control. Returns null when it may not (read-only credential).
   */
  claim(conn: LeaseConnection): LeaseEffect | null {
    if (!conn.canControl || !this.connections.includes(conn)) return null;
    if (this.controller?.clientId !== conn.clientId) {
      this.seat(conn);
      return { broadcast: true, solo: null };
    }
    if (this.effective !== conn) {
      this.effective = conn;
      return { broadcast: false, solo: conn };
    }
    return NONE;
  }

  /** Only the controller's effective connection may resize. */
  mayResize(conn: LeaseConnection): boolean {
    return this.effective === conn;
  }

  /**
   * Auto-replies (answers to device queries) come from the controller's effective connection, or,
   * with no controller, from the earliest attached connection that may write.
   */
  mayAutoReply(conn: LeaseConnection): boolean {
    if (this.effective) return this.effective === conn;
    return this.connections.find((c) => c.canControl) === conn;
  }

  private seat(conn: LeaseConnection): void {
    this.controller = { clientId: conn.clientId, label: conn.label, since: this.now() };
    this.effective = conn;
  }

  private newestControllingOf(clientId: string): LeaseConnection | null {
    for (let i = this.connections.length - 1; i >= 0; i--) {
      const conn = this.connections[i]!;
      if (conn.clientId === clientId && conn.canControl) return conn;
    }
    return null;
  }
}
