import { afterEach, describe, expect, it, vi } from "vitest";
import type { SubmitStatusPayload } from "../../../server/contract/types.ts";
import { SubmissionLog, type StatusDelivery } from "../../../server/session/submission-log.ts";
import { waitFor } from "../../../server/testing/wait.ts";
import { mergeDraft, type Draft, type DraftState } from "./draft-store.ts";
import { createOutbox, QUERY_ANSWER_TIMEOUT_MS, RESEND_WINDOW_MS, type Outbox, type OutboxLink, type OutboxStore } from "./outbox.ts";

const SESSION = "sess0001";
const encoder = new TextEncoder();

/** draft-store.ts's rules (one transaction per change, states never move back) over a Map. */
class MemoryDrafts implements OutboxStore {
  readonly drafts = new Map<string, Draft>();
  private seq = 0;

  add(fields: Partial<Draft> & { id: string }): Draft {
    this.seq += 1;
    const draft: Draft = { sessionId: SESSION, generation: "g1", body: fields.id, submitKey: "\r", state: "queued", seq: this.seq, createdAt: Date.now(), ...fields };
    this.drafts.set(draft.id, draft);
    return draft;
  }

  state(id: string): DraftState | undefined {
    return this.drafts.get(id)?.state;
  }

  async listDrafts(sessionId: string): Promise<Draft[]> {
    await Promise.resolve();
    return [...this.drafts.values()].filter((d) => d.sessionId === sessionId).sort((a, b) => a.seq - b.seq);
  }

  async changeDraft(id: string, change: (draft: Draft) => Partial<Draft>): Promise<Draft | null> {
    await Promise.resolve();
    const current = this.drafts.get(id);
    if (!current) return null;
    const next = mergeDraft(current, change(current));
    this.drafts.set(id, next);
    return next;
  }
}

/**
 * The server side of submissions: the server's own SubmissionLog (an ID is written at most once),
 * statuses delivered to every link of the clients they concern, a little later, as a socket would.
 */
class FakeServer {
  readonly log = new SubmissionLog();
  generation = "g1";
  /** what reached the program, in order */
  readonly written: string[] = [];
  readonly links = new Set<FakeLink>();

  submit(from: FakeLink, draft: Draft, generation: string): void {
    let wrote = false;
    const outcome = this.log.submit(
      from.clientId,
      { id: draft.id, generation, body: encoder.encode(draft.body), submitKey: encoder.encode(draft.submitKey) },
      {
        generation: this.generation,
        running: true,
        bracketedPaste: false,
        // Body and submit key arrive as two writes of one submission.
        write: () => {
          if (!wrote) this.written.push(draft.id);
          wrote = true;
        },
        drained: async () => true,
      },
    );
    this.deliver(outcome.now);
    void outcome.settled?.then((deliveries) => this.deliver(deliveries));
  }

  query(from: FakeLink, ids: string[]): void {
    this.deliver(this.log.query(from.clientId, ids).map((status) => ({ status, clients: new Set([from.clientId]) })));
  }

  private deliver(deliveries: StatusDelivery[]): void {
    setTimeout(() => {
      for (const { status, clients } of deliveries) for (const link of this.links) if (link.live && clients.has(link.clientId)) link.hear(status);
    }, 0);
  }
}

type Sent = { kind: "submit"; id: string; generation: string; storedState: DraftState | undefined } | { kind: "query"; ids: string[] };

class FakeLink implements OutboxLink {
  live = true;
  answerQueries = true;
  readonly sent: Sent[] = [];
  private readonly listeners = new Set<(status: SubmitStatusPayload) => void>();

  constructor(
    private readonly server: FakeServer,
    private readonly store: MemoryDrafts,
    readonly clientId: string,
  ) {
    server.links.add(this);
  }

  liveGeneration(): string | null {
    return this.live ? this.server.generation : null;
  }
  sendSubmit(draft: Draft, generation: string): boolean {
    if (!this.live) return false;
    this.sent.push({ kind: "submit", id: draft.id, generation, storedState: this.store.state(draft.id) });
    this.server.submit(this, draft, generation);
    return true;
  }
  sendQuery(ids: string[]): boolean {
    if (!this.live) return false;
    this.sent.push({ kind: "query", ids });
    if (this.answerQueries) this.server.query(this, ids);
    return true;
  }
  onSubmitStatus(listener: (status: SubmitStatusPayload) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  hear(status: SubmitStatusPayload): void {
    for (const listener of this.listeners) listener(status);
  }
  submits(): string[] {
    return this.sent.filter((s) => s.kind === "submit").map((s) => s.id);
  }
  queries(): string[][] {
    return this.sent.flatMap((s) => (s.kind === "query" ? [s.ids] : []));
  }
}

const outboxes: Outbox[] = [];
function outbox(link: FakeLink, store: MemoryDrafts, now?: () => number): Outbox {
  const created = createOutbox(SESSION, link, { store, now });
  outboxes.push(created);
  return created;
}

afterEach(() => {
  for (const o of outboxes.splice(0)) o.dispose();
  vi.useRealTimers();
});

const settled = (store: MemoryDrafts, ids: string[]) =>
  waitFor(() => ids.every((id) => !["queued", "sending", "received"].includes(store.state(id)!)), { message: `settled: ${ids.join(", ")}` });

describe("createOutbox", () => {
  it("sends drafts in creation order, each saved as sending before it goes out, once live", async () => {
    const server = new FakeServer();
    const store = new MemoryDrafts();
    const link = new FakeLink(server, store, "tab-a");
    link.live = false;
    for (const id of ["draft-0001", "draft-0002", "draft-0003"]) store.add({ id });
    const box = outbox(link, store);

    box.pump();
    await waitFor(async () => (await store.listDrafts(SESSION)).length === 3);
    expect(link.sent).toEqual([]);

    link.live = true;
    box.pump();
    await settled(store, ["draft-0001", "draft-0002", "draft-0003"]);
    expect(link.submits()).toEqual(["draft-0001", "draft-0002", "draft-0003"]);
    expect(link.sent.every((s) => s.kind === "submit" && s.storedState === "sending" && s.generation === "g1")).toBe(true);
    expect(server.written).toEqual(["draft-0001", "draft-0002", "draft-0003"]);
    expect([...store.drafts.values()].map((d) => d.state)).toEqual(["written", "written", "written"]);
  });

  it("after a reconnect queries what was in flight and resends only the missing ones of the current generation", async () => {
    const server = new FakeServer();
    const store = new MemoryDrafts();
    const now = Date.now();
    // Written before the socket dropped, but this tab never heard it.
    store.add({ id: "known-0001", state: "sending", sentAt: now });
    server.submit(new FakeLink(server, store, "tab-a"), store.drafts.get("known-0001")!, "g1");
    await waitFor(() => server.log.get("known-0001")?.state === "written");
    // Saved as sending, lost before the server saw it.
    store.add({ id: "lost-00002", state: "sending", sentAt: now });
    // For a generation that ended: one the old run never got, one it wrote, one never sent.
    store.add({ id: "old-000003", state: "sending", sentAt: now, generation: "g0" });
    store.add({ id: "oldw-00007", state: "received", sentAt: now, generation: "g0" });
    server.generation = "g0";
    server.submit(new FakeLink(server, store, "tab-a"), store.drafts.get("oldw-00007")!, "g0");
    await waitFor(() => server.log.get("oldw-00007")?.state === "written");
    server.generation = "g1";
    store.add({ id: "oldq-00008", generation: "g0" });
    // The server had it (received), then forgot it: it may have been written.
    store.add({ id: "forgot-004", state: "received", sentAt: now });
    // Sent so long ago that its record may have expired after it was written.
    store.add({ id: "stale-0005", state: "sending", sentAt: now - RESEND_WINDOW_MS - 1 });
    store.add({ id: "queued-006" });

    const link = new FakeLink(server, store, "tab-a");
    outbox(link, store).pump();
    await settled(store, ["known-0001", "lost-00002", "old-000003", "oldw-00007", "oldq-00008", "forgot-004", "stale-0005", "queued-006"]);

    expect(link.queries()).toEqual([["known-0001", "lost-00002", "old-000003", "oldw-00007", "forgot-004", "stale-0005"]]);
    expect(link.submits()).toEqual(["lost-00002", "queued-006"]);
    expect(link.sent.filter((s) => s.kind === "submit").every((s) => s.kind === "submit" && s.generation === "g1")).toBe(true);
    expect(server.written).toEqual(["known-0001", "oldw-00007", "lost-00002", "queued-006"]);
    expect(Object.fromEntries([...store.drafts.values()].map((d) => [d.id, d.error ? `${d.state}: ${d.error}` : d.state]))).toEqual({
      "known-0001": "written",
      "lost-00002": "written",
      "old-000003": "failed: generation",
      "oldw-00007": "written",
      "oldq-00008": "failed: generation",
      "forgot-004": "missing",
      "stale-0005": "missing",
      "queued-006": "written",
    });
  });

  it("never sends a failed: generation draft again, however often it reconnects", async () => {
    const server = new FakeServer();
    const store = new MemoryDrafts();
    store.add({ id: "written-g0", generation: "g0" });
    const link = new FakeLink(server, store, "tab-a");
    const box = outbox(link, store);
    box.pump();
    await waitFor(() => store.state("written-g0") === "failed");
    expect(store.drafts.get("written-g0")!.error).toBe("generation");

    for (let i = 0; i < 3; i++) {
      link.live = false;
      box.connectionChanged();
      link.live = true;
      box.pump();
    }
    store.add({ id: "marker-001" });
    box.pump();
    await settled(store, ["marker-001"]);
    expect(link.submits()).toEqual(["marker-001"]);
    expect(link.queries().flat()).not.toContain("written-g0");
    expect(server.written).toEqual(["marker-001"]);
  });

  it("two tabs of one client racing on the same drafts write each once", async () => {
    const server = new FakeServer();
    const store = new MemoryDrafts();
    const ids = ["shared-001", "shared-002"];
    for (const id of ids) store.add({ id });
    const first = new FakeLink(server, store, "same-client");
    const second = new FakeLink(server, store, "same-client");
    const a = outbox(first, store);
    const b = outbox(second, store);
    a.pump();
    b.pump();
    await settled(store, ids);
    // Both tabs went for them with the drafts' own IDs, not new ones.
    expect(first.submits()).toEqual(ids);
    expect(second.submits()).toEqual(ids);
    expect(server.written).toEqual(ids);
    expect(ids.map((id) => store.state(id))).toEqual(["written", "written"]);
  });

  it("gives up a query left unanswered and asks again on the next connection", async () => {
    vi.useFakeTimers();
    const server = new FakeServer();
    const store = new MemoryDrafts();
    store.add({ id: "inflight-1", state: "sending", sentAt: Date.now() });
    store.add({ id: "queued-002" });
    const link = new FakeLink(server, store, "tab-a");
    link.answerQueries = false;
    const box = outbox(link, store);
    box.pump();
    await vi.advanceTimersByTimeAsync(QUERY_ANSWER_TIMEOUT_MS - 1);
    expect(link.queries()).toEqual([["inflight-1"]]);
    expect(link.submits()).toEqual([]);

    // Past the timeout the run ends without sending anything: the queued draft waits behind it.
    await vi.advanceTimersByTimeAsync(1);
    box.pump();
    await vi.advanceTimersByTimeAsync(0);
    expect(link.queries()).toEqual([["inflight-1"], ["inflight-1"]]);
    expect(link.submits()).toEqual([]);
    expect(store.state("inflight-1")).toBe("sending");

    // The next connection's server answers: `missing` is resent, then the queued one.
    link.answerQueries = true;
    link.live = false;
    box.connectionChanged();
    link.live = true;
    box.pump();
    await vi.advanceTimersByTimeAsync(QUERY_ANSWER_TIMEOUT_MS);
    expect(link.submits()).toEqual(["inflight-1", "queued-002"]);
    expect(server.written).toEqual(["inflight-1", "queued-002"]);
    expect([store.state("inflight-1"), store.state("queued-002")]).toEqual(["written", "written"]);
  });

  it("abandons an unanswered query at once when the connection changes", async () => {
    vi.useFakeTimers();
    const server = new FakeServer();
    const store = new MemoryDrafts();
    store.add({ id: "inflight-1", state: "sending", sentAt: Date.now() });
    const link = new FakeLink(server, store, "tab-a");
    link.answerQueries = false;
    const box = outbox(link, store);
    box.pump();
    await vi.advanceTimersByTimeAsync(0);
    expect(link.queries()).toHaveLength(1);

    link.answerQueries = true;
    box.connectionChanged();
    box.pump();
    // Well inside the timeout: the second query went out and its answer led to the resend.
    await vi.advanceTimersByTimeAsync(1);
    expect(link.queries()).toHaveLength(2);
    expect(link.submits()).toEqual(["inflight-1"]);
  });
});
