import { bracketPasteBytes } from "../contract/bracketed-paste.ts";
import { SUBMISSION_LOG_SIZE, SUBMISSION_TTL_MS } from "../contract/protocol.ts";
import type { SubmissionError, SubmissionState, SubmitStatusPayload } from "../contract/types.ts";

export type SubmissionRecord = {
  readonly id: string;
  state: Exclude<SubmissionState, "missing">;
  error?: SubmissionError;
  /** the client that submitted it: all of its connections hear every state */
  readonly clientId: string;
  readonly createdAt: number;
  /** other clients that queried it while it was `received`: they hear its final state */
  readonly watchers: Set<string>;
};

/** Who must hear a status: every connection of these clients. */
export type StatusDelivery = { status: SubmitStatusPayload; clients: ReadonlySet<string> };

/** The program's input, as the submission writer sees it. */
export type SubmissionTarget = {
  readonly generation: string;
  readonly running: boolean;
  readonly bracketedPaste: boolean;
  /** Queue bytes for the PTY; throws when it cannot. */
  write(bytes: Uint8Array): void;
  /** Resolves when the queued bytes were taken by the kernel: true, or false when the program went away first. */
  drained(): Promise<boolean>;
  /**
   * Write the bytes with the record, in one step the program's owner keeps (a PTY in the session
   * host): what it settles with, `written` or `partial`. Used instead of write and drained.
   */
  writeOnce?(record: { id: string; clientId: string; createdAt: number }, bytes: Uint8Array): Promise<"written" | "partial">;
};

/** A record kept by the session host across a restart of the server. */
export type RestoredSubmission = { id: string; clientId: string; createdAt: number; state: "received" | "written" | "partial" };

/** What to announce now, and (while the bytes drain into the PTY) what to announce when they did. */
export type SubmitOutcome = { now: StatusDelivery[]; settled: Promise<StatusDelivery[]> | null };

/**
 * Submissions (docs/protocol.md § Submissions): each ID is written at most once per server run, its state kept for
 * the most recent 256 records and 30 minutes, reported to the submitting client's connections and
 * to other clients that asked about it while it was in flight.
 */
export class SubmissionLog {
  /** insertion order = age order (Map keeps it), oldest first */
  private readonly records = new Map<string, SubmissionRecord>();

  constructor(
    private readonly now: () => number = Date.now,
    private readonly capacity = SUBMISSION_LOG_SIZE,
    private readonly ttlMs = SUBMISSION_TTL_MS,
  ) {}

  get(id: string): SubmissionRecord | undefined {
    this.expire();
    return this.records.get(id);
  }

  /**
   * Handle one submission. `now` holds the statuses to deliver at once; `settled`, when present,
   * resolves with the final one once the bytes reached the PTY. A repeated ID is never written
   * again: it answers with its recorded state.
   */
  submit(
    clientId: string,
    submission: { id: string; generation: string; body: Uint8Array; submitKey: Uint8Array },
    target: SubmissionTarget,
  ): SubmitOutcome {
    const known = this.get(submission.id);
    if (known) {
      if (known.state === "received" && known.clientId !== clientId) known.watchers.add(clientId);
      return { now: [this.deliveryTo(known, new Set([clientId]))], settled: null };
    }
    if (submission.generation !== target.generation) {
      return { now: [this.settle(this.record(submission.id, clientId), "failed", "generation")], settled: null };
    }
    if (!target.running) {
      return { now: [this.settle(this.record(submission.id, clientId), "failed", "write")], settled: null };
    }
    const record = this.record(submission.id, clientId);
    const received = this.deliveryOf(record);
    if (target.writeOnce) {
      const body = target.bracketedPaste ? bracketPasteBytes(submission.body) : submission.body;
      const bytes = new Uint8Array(body.length + submission.submitKey.length);
      bytes.set(body, 0);
      bytes.set(submission.submitKey, body.length);
      const settled = target.writeOnce(record, bytes).then(
        (state) => this.settleInFlight(record, state),
        () => this.settleInFlight(record, "partial"),
      );
      return { now: [received], settled };
    }
    // Body and key are queued in one synchronous step: no other input can interleave.
    let queued = false;
    try {
      const body = target.bracketedPaste ? bracketPasteBytes(submission.body) : submission.body;
      if (body.length > 0) {
        target.write(body);
        queued = true;
      }
      if (submission.submitKey.length > 0) target.write(submission.submitKey);
    } catch {
      return { now: [received, this.settle(record, queued ? "partial" : "failed", queued ? undefined : "write")], settled: null };
    }
    const settled = target.drained().then(
      (stillThere) => this.settleInFlight(record, stillThere ? "written" : "partial"),
      () => this.settleInFlight(record, "partial"),
    );
    return { now: [received], settled };
  }

  /**
   * The program went away while this submission's bytes were still draining into it: `partial`,
   * now, so the status can go out before the exit frame (its drain would only say so afterwards).
   * Nothing for an ID that is not in flight.
   */
  abandon(id: string): StatusDelivery[] {
    const record = this.records.get(id);
    return record ? this.settleInFlight(record, "partial") : [];
  }

  /** A submission frame whose header named an ID but was otherwise invalid. */
  reject(clientId: string, id: string): StatusDelivery[] {
    const known = this.get(id);
    if (known) return [this.deliveryTo(known, new Set([clientId]))];
    return [this.settle(this.record(id, clientId), "failed", "invalid")];
  }

  /** 0x04: the state of each ID (`missing` when unknown); a querier of an in-flight ID will hear its end. */
  query(clientId: string, ids: readonly string[]): SubmitStatusPayload[] {
    this.expire();
    return ids.map((id) => {
      const record = this.records.get(id);
      if (!record) return { id, state: "missing" };
      if (record.state === "received" && record.clientId !== clientId) record.watchers.add(clientId);
      return statusOf(record);
    });
  }

  /** Records the session host kept while the server restarted (oldest first); their IDs are never written again. */
  restore(records: readonly RestoredSubmission[]): void {
    for (const r of [...records].sort((a, b) => a.createdAt - b.createdAt)) {
      if (this.records.has(r.id)) continue;
      this.records.set(r.id, { id: r.id, state: r.state, clientId: r.clientId, createdAt: r.createdAt, watchers: new Set() });
    }
    while (this.records.size > this.capacity) this.records.delete(this.records.keys().next().value!);
  }

  get size(): number {
    this.expire();
    return this.records.size;
  }

  private record(id: string, clientId: string): SubmissionRecord {
    const record: SubmissionRecord = { id, state: "received", clientId, createdAt: this.now(), watchers: new Set() };
    this.records.set(id, record);
    while (this.records.size > this.capacity) {
      const oldest = this.records.keys().next().value!;
      this.records.delete(oldest);
    }
    return record;
  }

  /** Settle a record still `received` (the first of its drain and an abandonment wins). */
  private settleInFlight(record: SubmissionRecord, state: "written" | "partial"): StatusDelivery[] {
    return record.state === "received" ? [this.settle(record, state)] : [];
  }

  private settle(record: SubmissionRecord, state: SubmissionRecord["state"], error?: SubmissionError): StatusDelivery {
    record.state = state;
    if (error) record.error = error;
    const delivery = this.deliveryOf(record);
    record.watchers.clear();
    return delivery;
  }

  private deliveryOf(record: SubmissionRecord): StatusDelivery {
    return { status: statusOf(record), clients: new Set([record.clientId, ...record.watchers]) };
  }

  private deliveryTo(record: SubmissionRecord, clients: Set<string>): StatusDelivery {
    return { status: statusOf(record), clients };
  }

  private expire(): void {
    const cutoff = this.now() - this.ttlMs;
    for (const [id, record] of this.records) {
      if (record.createdAt >= cutoff) break;
      this.records.delete(id);
    }
  }
}

function statusOf(record: SubmissionRecord): SubmitStatusPayload {
  return record.error ? { id: record.id, state: record.state, error: record.error } : { id: record.id, state: record.state };
}
