/**
 * The chat end of a hybrid session while its headless agent runs: turns the driver's events into
 * journal events, feeds queued sends to the agent one turn at a time, and settles permission
 * requests (first answer wins; interrupts, moves and exits cancel them).
 */
import { randomUUID } from "node:crypto";
import type { PermissionAnswerer, TurnStatus } from "../contract/chat.ts";
import type { ChatDriver } from "./adapters/adapter.ts";
import { within } from "./adapters/agent-process.ts";
import type { ChatJournal } from "./chat-journal.ts";
import type { ChatOutbox } from "./chat-outbox.ts";

/** docs/design.md, Hybrid sessions: an interrupted turn gets this long to end (its `result`) before the agent is closed anyway. */
export const INTERRUPT_WAIT_MS = 5_000;

export type ChatActivity = "idle" | "busy" | "awaiting_permission";

/** What the chat end tells the hybrid session. */
export type ChatEndHost = {
  activity(state: ChatActivity): void;
  conversation(id: string): void;
  /** the agent went away by itself; `error` says why when it was not a clean exit */
  exited(error: string | undefined): void;
  warning(message: string): void;
  attention(): void;
};

export class ChatEnd {
  private driver: ChatDriver | null = null;
  private readonly unsubscribe: (() => void)[] = [];
  private turnEnded: (() => void) | null = null;

  constructor(
    private readonly journal: ChatJournal,
    private readonly outbox: ChatOutbox,
    private readonly host: ChatEndHost,
  ) {}

  get running(): boolean {
    return this.driver !== null;
  }

  get pid(): number | null {
    return this.driver?.pid ?? null;
  }

  /** Start `driver` (events flow from now on); throws when the agent cannot start. */
  async start(driver: ChatDriver): Promise<void> {
    const ev = driver.events;
    const live = () => this.driver === driver || this.driver === null;
    this.unsubscribe.push(
      ev.on("init", (id) => live() && this.host.conversation(id)),
      ev.on("message", (message) => live() && this.journal.upsert(message)),
      ev.on("delta", (messageId, part, text) => live() && this.journal.delta(messageId, part, text)),
      ev.on("permission", (request) => {
        if (!live()) return;
        this.journal.permissionRequested(request);
        this.host.activity("awaiting_permission");
        this.host.attention();
      }),
      ev.on("permissionCanceled", (requestId) => {
        if (live() && this.journal.permissionResolved(requestId, "canceled", null)) this.settleActivity();
      }),
      ev.on("turnEnd", (status, costUsd, error) => live() && this.endTurn(status, costUsd, error)),
      ev.on("warning", (_code, message) => live() && this.host.warning(message)),
      ev.on("exit", (_code, error) => {
        if (this.driver !== driver) return; // closed on purpose
        this.detach();
        this.cancelPermissions();
        if (this.journal.runningTurn) this.endTurn("error", undefined, error ?? "the agent exited");
        this.outbox.failAll();
        this.host.exited(error);
      }),
    );
    try {
      await driver.start();
    } catch (err) {
      this.detach();
      throw err;
    }
    this.driver = driver;
  }

  /** Hand the next queued send to the agent, when it is idle. */
  pump(): void {
    const driver = this.driver;
    if (!driver || this.journal.runningTurn) return;
    const send = this.outbox.take();
    if (!send) return;
    const messageId = randomUUID();
    this.journal.upsert({ id: messageId, role: "user", parts: [{ type: "text", text: send.text }], createdAt: Date.now(), turnId: send.id });
    this.journal.turnStarted(send.id);
    this.host.activity("busy");
    this.outbox.write(send, () => driver.send({ id: send.id, text: send.text, messageId }));
  }

  /** A client's answer; false when the request is no longer open (someone answered first). */
  respond(requestId: string, decision: "allow" | "deny", by: PermissionAnswerer, extra: { updatedInput?: unknown; message?: string }): boolean {
    if (!this.journal.openPermissions.some((p) => p.requestId === requestId)) return false;
    this.driver?.respond(requestId, decision === "allow" ? { behavior: "allow", updatedInput: extra.updatedInput } : { behavior: "deny", message: extra.message });
    this.journal.permissionResolved(requestId, decision, by);
    this.settleActivity();
    return true;
  }

  interrupt(): void {
    if (!this.driver || !this.journal.runningTurn) return;
    this.driver.interrupt();
    this.cancelPermissions();
  }

  /** Interrupt a running turn (≤ INTERRUPT_WAIT_MS for it to end), cancel permission requests, close the agent. */
  async stop(): Promise<void> {
    const driver = this.driver;
    if (!driver) return;
    if (this.journal.runningTurn) {
      const ended = new Promise<void>((resolve) => (this.turnEnded = resolve));
      this.interrupt();
      await within(ended, INTERRUPT_WAIT_MS);
    }
    this.cancelPermissions();
    this.detach();
    await driver.close();
    if (this.journal.runningTurn) this.journal.turnEnded("interrupted");
  }

  private endTurn(status: TurnStatus, costUsd: number | undefined, error: string | undefined): void {
    const turn = this.journal.runningTurn;
    this.cancelPermissions();
    if (error && turn) {
      this.journal.upsert({ id: `error-${turn.turnId}`, role: "system", parts: [{ type: "service", text: error }], createdAt: Date.now(), turnId: turn.turnId });
    }
    this.journal.turnEnded(status, costUsd);
    this.turnEnded?.();
    this.turnEnded = null;
    this.host.activity("idle");
    this.pump();
  }

  private cancelPermissions(): void {
    for (const { requestId } of this.journal.openPermissions) {
      this.driver?.respond(requestId, { behavior: "deny", message: "Canceled.", interrupt: true });
      this.journal.permissionResolved(requestId, "canceled", null);
    }
  }

  private settleActivity(): void {
    if (this.journal.openPermissions.length === 0 && this.journal.runningTurn) this.host.activity("busy");
  }

  private detach(): void {
    this.driver = null;
    for (const off of this.unsubscribe.splice(0)) off();
  }
}
