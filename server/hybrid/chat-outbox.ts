import type { SubmitStatusPayload } from "../contract/types.ts";
import type { StatusDelivery, SubmissionLog } from "../session/submission-log.ts";

/**
 * Chat sends are submissions: recorded in the session's own SubmissionLog (so an ID written once,
 * through either end, is never written again), with its states and limits. The log writes at
 * once, but a chat send waits its turn while the agent starts or is busy, so sends are queued
 * here until the agent can take them; `written` means the turn reached the agent's stdin.
 */
export type ChatSend = { id: string; clientId: string; text: string; watchers: Set<string> };

/** Chat sends are not tied to a terminal generation; the log's generation check always passes. */
const CHAT_GENERATION = "chat";
const NO_BYTES = new Uint8Array(0);

export class ChatOutbox {
  private readonly queue: ChatSend[] = [];

  constructor(
    private readonly log: SubmissionLog,
    private readonly deliver: (deliveries: StatusDelivery[]) => void,
  ) {}

  get size(): number {
    return this.queue.length;
  }

  /** Queue a send; false (after answering its known state) when this ID was seen before. */
  accept(clientId: string, id: string, text: string): boolean {
    const queued = this.queue.find((s) => s.id === id);
    if (queued) {
      if (queued.clientId !== clientId) queued.watchers.add(clientId);
      this.deliver([{ status: { id, state: "received" }, clients: new Set([clientId]) }]);
      return false;
    }
    if (this.log.get(id)) {
      this.deliver(this.log.query(clientId, [id]).map((status) => ({ status, clients: new Set([clientId]) })));
      return false;
    }
    this.queue.push({ id, clientId, text, watchers: new Set() });
    this.deliver([{ status: { id, state: "received" }, clients: new Set([clientId]) }]);
    return true;
  }

  /** A send frame that named an ID but was otherwise invalid. */
  reject(clientId: string, id: string): void {
    if (this.queue.some((s) => s.id === id)) return this.deliver([{ status: { id, state: "received" }, clients: new Set([clientId]) }]);
    this.deliver(this.log.reject(clientId, id));
  }

  query(clientId: string, ids: readonly string[]): SubmitStatusPayload[] {
    return ids.map((id) => {
      const queued = this.queue.find((s) => s.id === id);
      if (!queued) return this.log.query(clientId, [id])[0]!;
      if (queued.clientId !== clientId) queued.watchers.add(clientId);
      return { id, state: "received" };
    });
  }

  /** The next send, taken off the queue. */
  take(): ChatSend | undefined {
    return this.queue.shift();
  }

  /**
   * Record `send` as written through `write` (which resolves true once the agent's stdin took it):
   * `written`, or `partial` when the agent went away with the bytes in flight.
   */
  write(send: ChatSend, write: () => Promise<boolean>): void {
    const outcome = this.log.submit(
      send.clientId,
      { id: send.id, generation: CHAT_GENERATION, body: NO_BYTES, submitKey: NO_BYTES },
      {
        generation: CHAT_GENERATION,
        running: true,
        bracketedPaste: false,
        // The log hands over bytes here; the chat driver frames the turn itself and writes it in
        // `drained`, which is what the log waits on before it says `written`.
        write: () => {},
        drained: write,
      },
    );
    // `received` was announced when the send was queued; only what follows is news.
    this.deliver(this.withWatchers(outcome.now.filter((d) => d.status.state !== "received"), send));
    void outcome.settled?.then((deliveries) => this.deliver(this.withWatchers(deliveries, send)));
  }

  /** The agent cannot take these (it failed to start, or the session left the chat end): `failed: write`. */
  failAll(): void {
    for (const send of this.queue.splice(0)) {
      const outcome = this.log.submit(
        send.clientId,
        { id: send.id, generation: CHAT_GENERATION, body: NO_BYTES, submitKey: NO_BYTES },
        { generation: CHAT_GENERATION, running: false, bracketedPaste: false, write: () => {}, drained: async () => false },
      );
      this.deliver(this.withWatchers(outcome.now, send));
    }
  }

  private withWatchers(deliveries: StatusDelivery[], send: ChatSend): StatusDelivery[] {
    if (send.watchers.size === 0) return deliveries;
    return deliveries.map((d) => ({ status: d.status, clients: new Set([...d.clients, ...send.watchers]) }));
  }
}
