import type { SessionRegistry } from "../session/registry.ts";
import type { Session } from "../session/session.ts";

/**
 * Which session `pane_id: "auto"` / `"active"` means: the running session a person (or an
 * agent) used last. Use is seen as: the session was created, a client attached (its client
 * count grew), a person typed or submitted into it (any program, not only a shell), a
 * person's command started (a shell with integration: ./agent-api.ts), or the Agent API
 * typed into it.
 */
export class ActiveSession {
  private readonly lastUsed = new Map<string, number>();
  private readonly clients = new Map<string, number>();
  private clock = 0;
  private readonly unsubscribe: Array<() => void>;

  constructor(private readonly registry: SessionRegistry) {
    for (const s of registry.list()) this.note(s.id);
    this.unsubscribe = [
      registry.events.on("created", (s) => this.note(s.id)),
      registry.events.on("input", (s) => this.note(s.id)),
      registry.events.on("updated", (s, previewOnly) => {
        if (!previewOnly) this.observe(s);
      }),
      registry.events.on("removed", (id) => {
        this.lastUsed.delete(id);
        this.clients.delete(id);
      }),
    ];
  }

  /** Mark a session as just used. */
  note(id: string): void {
    // A counter, not the clock: two uses in one millisecond still have an order.
    this.lastUsed.set(id, ++this.clock);
  }

  /** The running session used last, if any. */
  current(): Session | null {
    let best: Session | null = null;
    let bestAt = -1;
    for (const s of this.registry.list()) {
      if (s.status !== "running") continue;
      const at = this.lastUsed.get(s.id) ?? 0;
      if (at > bestAt) {
        best = s;
        bestAt = at;
      }
    }
    return best;
  }

  dispose(): void {
    for (const off of this.unsubscribe) off();
  }

  private observe(s: Session): void {
    const clients = s.clients;
    if (clients > (this.clients.get(s.id) ?? 0)) this.note(s.id);
    this.clients.set(s.id, clients);
  }
}
