/**
 * Concurrent WebSockets one address may hold: a user's tabs, phone, `webmux attach` windows and
 * agents together stay far below it, while a runaway or hostile script from one address stops
 * here instead of taking every slot (and file descriptor) of the server.
 */
export const DEFAULT_MAX_CONNECTIONS_PER_ADDRESS = 256;
/**
 * Concurrent WebSockets in all: each holds a socket (one file descriptor), its buffers and a
 * share of every broadcast, so the server stays responsive with room for plain HTTP. (The
 * process's `ulimit -n` must be above it for the cap, not the kernel, to be what refuses.)
 */
export const DEFAULT_MAX_CONNECTIONS = 4096;

export type ConnectionLimits = {
  /** concurrent WebSockets per client address */
  perAddress: number;
  /** concurrent WebSockets across all addresses */
  total: number;
};

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  perAddress: DEFAULT_MAX_CONNECTIONS_PER_ADDRESS,
  total: DEFAULT_MAX_CONNECTIONS,
};

/** The address a connection is counted against: an IPv4 peer reached over a dual-stack socket counts as its IPv4 address. */
export function connectionAddress(remoteAddress: string | undefined): string {
  if (!remoteAddress) return "unknown";
  return remoteAddress.startsWith("::ffff:") && remoteAddress.includes(".") ? remoteAddress.slice(7) : remoteAddress;
}

/** Counts open connections (WebSockets, HTTP connections) per address and in all, and says when one more would pass a limit. */
export class ConnectionLimiter {
  private readonly byAddress = new Map<string, number>();
  private count = 0;

  constructor(
    readonly limits: ConnectionLimits = DEFAULT_CONNECTION_LIMITS,
    /** what is counted, for the refusal's message */
    private readonly noun = "WebSockets",
  ) {
    for (const [name, value] of Object.entries(limits)) {
      if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`connection limit ${name} must be a positive integer, got ${value}`);
    }
  }

  /** Why one more connection from `address` is refused, or null when it may open. */
  refusal(address: string): string | null {
    if (this.count >= this.limits.total) return `the server already holds ${this.count} ${this.noun}, its limit; try again later`;
    const mine = this.byAddress.get(address) ?? 0;
    if (mine >= this.limits.perAddress) return `${address} already holds ${mine} ${this.noun}, the limit per address; close some first`;
    return null;
  }

  /** Count one connection of `address`; the returned function gives the slot back (once, however often it is called). */
  take(address: string): () => void {
    this.count++;
    this.byAddress.set(address, (this.byAddress.get(address) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.count--;
      const left = (this.byAddress.get(address) ?? 1) - 1;
      if (left <= 0) this.byAddress.delete(address);
      else this.byAddress.set(address, left);
    };
  }

  get total(): number {
    return this.count;
  }

  of(address: string): number {
    return this.byAddress.get(address) ?? 0;
  }

  /** Addresses holding at least one connection. */
  get addresses(): number {
    return this.byAddress.size;
  }
}

/** The limits a server runs with: what it was told, else the defaults. */
export function connectionLimits(options: { maxConnections?: number; maxConnectionsPerAddress?: number }): ConnectionLimits {
  return {
    perAddress: options.maxConnectionsPerAddress ?? DEFAULT_MAX_CONNECTIONS_PER_ADDRESS,
    total: options.maxConnections ?? DEFAULT_MAX_CONNECTIONS,
  };
}
