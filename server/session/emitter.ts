type Listener = (...args: never[]) => void;

/** Where a listener goes in its event's order. */
export type ListenerOptions = {
  /**
   * Before the listeners already there: for the one whose work someone waits on (the terminal
   * stream's write of an echo comes before the bookkeeping of the same bytes).
   */
  first?: boolean;
};

/**
 * A minimal typed event emitter; listeners are called synchronously in registration order, a
 * listener registered twice is called once. An emit calls the listeners there were when it
 * began. Each event's list is replaced on a change, never changed, so an emit (several per
 * keystroke) copies nothing.
 */
export class Emitter<Events extends Record<string, unknown[]>> {
  private readonly listeners = new Map<keyof Events, readonly Listener[]>();

  on<K extends keyof Events>(event: K, listener: (...args: Events[K]) => void, options?: ListenerOptions): () => void {
    const stored = listener as unknown as Listener;
    const current = this.listeners.get(event) ?? [];
    if (!current.includes(stored)) this.listeners.set(event, options?.first ? [stored, ...current] : [...current, stored]);
    return () => {
      const now = this.listeners.get(event);
      if (!now?.includes(stored)) return;
      const rest = now.filter((l) => l !== stored);
      if (rest.length > 0) this.listeners.set(event, rest);
      else this.listeners.delete(event);
    };
  }

  emit<K extends keyof Events>(event: K, ...args: Events[K]): void {
    const list = this.listeners.get(event);
    if (!list) return;
    for (let i = 0; i < list.length; i++) (list[i] as unknown as (...a: Events[K]) => void)(...args);
  }

  listenerCount(event: keyof Events): number {
    return this.listeners.get(event)?.length ?? 0;
  }

  clear(): void {
    this.listeners.clear();
  }
}
