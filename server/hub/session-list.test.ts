import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import WebSocket from "ws";
import { CloseCode, SESSION_LIST_PREVIEW_MS, SESSION_LIST_UPDATE_MS } from "../contract/protocol.ts";
import { decodeSessionListEvent } from "../contract/session-list.ts";
import type { SessionInfo, SessionListEvent } from "../contract/types.ts";
import { GLOBAL_PRINCIPAL, type Principal } from "../http/credentials.ts";
import { Emitter } from "../session/emitter.ts";
import { TerminalClient } from "../testing/terminal-client.ts";
import { startTestServer, TEST_SHELL_COMMAND, type TestServer } from "../testing/test-server.ts";
import { waitFor } from "../testing/wait.ts";
import { WebSocketAcceptor } from "./accept.ts";
import { SessionListStream, UpdateThrottle, type ListedSession, type SessionListSource } from "./session-list.ts";

/** Receive times jitter by a few ms (server and client share one event loop); a gap this much short of the window still fails. */
const GAP_TOLERANCE_MS = 40;

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.stop();
});

type Received = { at: number; event: SessionListEvent };

/** A /ws/sessions client that keeps every message with the time it arrived. */
class ListClient {
  readonly received: Received[] = [];
  closed: { code: number } | null = null;
  private constructor(readonly ws: WebSocket) {
    ws.on("message", (data, isBinary) => {
      expect(isBinary).toBe(false);
      const event = decodeSessionListEvent(data.toString());
      if (event.type === "invalid") throw new Error(`bad list message: ${event.detail}`);
      this.received.push({ at: performance.now(), event });
    });
    ws.on("close", (code) => (this.closed = { code }));
  }

  static async open(url: string, headers: Record<string, string>): Promise<ListClient> {
    const ws = new WebSocket(url.replace(/^http/, "ws") + "/ws/sessions", { headers });
    const client = new ListClient(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    await waitFor(() => client.received.length > 0, { message: "snapshot" });
    return client;
  }

  get snapshot(): SessionInfo[] {
    const first = this.received[0]?.event;
    if (first?.type !== "snapshot") throw new Error(`first message is ${first?.type}, not snapshot`);
    return first.sessions;
  }

  /** Messages about one session after the snapshot, in order. */
  about(id: string): Received[] {
    return this.received.slice(1).filter(({ event }) => (event.type === "removed" ? event.id : event.type === "snapshot" ? null : event.session.id) === id);
  }

  updates(id: string): Received[] {
    return this.about(id).filter(({ event }) => event.type === "updated");
  }

  /** The state this client would show for `id`: null once removed, undefined if never heard of. */
  latest(id: string): SessionInfo | null | undefined {
    const last = this.about(id).at(-1)?.event;
    if (!last) return this.snapshot.find((s) => s.id === id);
    if (last.type === "removed") return null;
    return last.type === "snapshot" ? undefined : last.session;
  }

  async close(): Promise<void> {
    if (this.ws.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      this.ws.once("close", () => resolve());
      this.ws.close();
    });
  }
}

const openList = () => ListClient.open(server.url, { authorization: `Bearer ${server.token}` });

async function current(id: string): Promise<SessionInfo> {
  const res = await server.api(`/api/sessions/${id}`);
  expect(res.status).toBe(200);
  return (await res.json()) as SessionInfo;
}

function gaps(times: number[]): number[] {
  return times.slice(1).map((t, i) => t - times[i]!);
}

describe("/ws/sessions", () => {
  it("sends a snapshot, then created, updated and removed through a session's life", async () => {
    const before = await server.createSession({ command: TEST_SHELL_COMMAND, title: "before" });
    const list = await openList();
    const listed = ((await (await server.api("/api/sessions")).json()) as { sessions: SessionInfo[] }).sessions;
    expect(list.snapshot.map((s) => s.id)).toEqual(listed.map((s) => s.id));
    expect(list.snapshot.find((s) => s.id === before.id)?.title).toBe("before");

    const exiting = await server.createSession({ command: ["sh", "-c", "exit 3"] });
    await waitFor(() => list.latest(exiting.id)?.status === "exited", { message: "exit delivered" });
    expect(list.about(exiting.id)[0]!.event.type).toBe("created");
    expect(list.latest(exiting.id)).toMatchObject({ status: "exited", exitCode: 3, pid: null });

    const renamed = await server.api(`/api/sessions/${before.id}`, { method: "PATCH", json: { title: "renamed" } });
    expect(renamed.status).toBe(200);
    await waitFor(() => list.latest(before.id)?.title === "renamed", { message: "rename delivered" });

    // The first client attached to /ws/s/{id} becomes its controller.
    const terminal = await TerminalClient.connect(server.url, before.id, { token: server.token, client: "phone-0001", label: "phone" });
    await waitFor(() => list.latest(before.id)?.controller?.clientId === "phone-0001", { message: "controller delivered" });
    expect(list.latest(before.id)).toMatchObject({ clients: 1, controller: { clientId: "phone-0001", label: "phone" } });
    await terminal.close();
    await waitFor(() => list.latest(before.id)?.clients === 0, { message: "detach delivered" });
    expect(list.latest(before.id)?.controller).toBeNull();
    const settled = await waitFor(async () => {
      const info = await current(before.id);
      return JSON.stringify(list.latest(before.id)) === JSON.stringify(info) ? info : null;
    }, { message: "list equals GET" });
    expect(list.latest(before.id)).toEqual(settled);

    const deleted = await server.api(`/api/sessions/${before.id}`, { method: "DELETE" });
    expect(deleted.status).toBe(204);
    await waitFor(() => list.latest(before.id) === null, { message: "removed delivered" });

    // A later session's `created` comes after anything still queued for the removed one.
    const sentinel = await server.createSession({ command: ["sh", "-c", "exit 0"] });
    await waitFor(() => list.latest(sentinel.id)?.status === "exited", { message: "sentinel exit" });
    expect(list.about(before.id).at(-1)!.event).toEqual({ type: "removed", id: before.id });
    for (const r of list.updates(before.id)) expect((r.event as { session: SessionInfo }).session.id).toBe(before.id);

    // Every session first appears as `created` (or in the snapshot), never as an `updated`.
    for (const id of [exiting.id, sentinel.id]) expect(list.about(id)[0]!.event.type).toBe("created");

    // A client connecting now sees the same as the HTTP list.
    const late = await openList();
    const now = ((await (await server.api("/api/sessions")).json()) as { sessions: SessionInfo[] }).sessions;
    expect(late.snapshot).toEqual(now);
    expect(late.snapshot.find((s) => s.id === before.id)).toBeUndefined();
    expect(late.snapshot.find((s) => s.id === exiting.id)).toMatchObject({ status: "exited", exitCode: 3 });
    await Promise.all([list.close(), late.close()]);
  });

  it("sends an updated for a size change and for attention raised and cleared", async () => {
    const list = await openList();
    // Rings the bell after the first byte it reads, then swallows the rest.
    const s = await server.createSession({ command: ["bash", "--norc", "--noprofile", "-c", "stty raw -echo; echo READY; head -c 1 > /dev/null; printf '\\a'; exec cat > /dev/null"] });
    const terminal = await TerminalClient.connect(server.url, s.id, { token: server.token, client: "list-sizer", label: "sizer" });
    await terminal.waitForText("READY");
    terminal.resize(100, 30);
    await waitFor(() => list.latest(s.id)?.cols === 100 && list.latest(s.id)?.rows === 30, { message: "size delivered" });
    expect(list.latest(s.id)?.attention).toBe(false);
    terminal.type("x");
    await waitFor(() => list.latest(s.id)?.attention === true, { message: "attention delivered" });
    terminal.type("y"); // user input clears it
    await waitFor(() => list.latest(s.id)?.attention === false, { message: "cleared attention delivered" });
    expect(list.updates(s.id).length).toBeGreaterThanOrEqual(3);
    await terminal.close();
    await list.close();
  });

  it("throttles a session printing continuously and still delivers its final state", async () => {
    const list = await openList();
    const loop = (name: string, extra: string) =>
      `for i in $(seq 1 70); do ${extra}date +%N; sleep 0.05; done; ${extra.replace(/\$i/g, "end")}echo done-${name}; exec sleep 600`;
    const previewOnly = await server.createSession({ command: ["bash", "--norc", "--noprofile", "-c", loop("p", "")], title: "printer" });
    // The same output, plus a new title (OSC 0) each time: every change is a full one.
    const titled = await server.createSession({ command: ["bash", "--norc", "--noprofile", "-c", loop("t", "printf '\\033]0;tick-%s\\033\\\\' $i; ")] });

    for (const [s, marker] of [[previewOnly, "done-p"], [titled, "done-t"]] as const) {
      const final = await waitFor(
        async () => {
          const info = await current(s.id);
          return info.preview.includes(marker) && JSON.stringify(list.latest(s.id)) === JSON.stringify(info) ? info : null;
        },
        { timeout: 20_000, message: `${marker}: final state delivered` },
      );
      expect(list.latest(s.id)).toEqual(final);
    }
    expect(list.latest(titled.id)?.title).toBe("tick-end");

    const createdAt = (id: string) => list.about(id).find((r) => r.event.type === "created")!.at;
    const previewTimes = [createdAt(previewOnly.id), ...list.updates(previewOnly.id).map((r) => r.at)];
    const titledTimes = [createdAt(titled.id), ...list.updates(titled.id).map((r) => r.at)];
    // ~4 s of output: enough changes that the throttle, not the program, sets the pace.
    expect(previewTimes.length - 1).toBeGreaterThanOrEqual(2);
    expect(titledTimes.length - 1).toBeGreaterThanOrEqual(5);
    // Every update of the first session changed nothing but the preview (and updatedAt).
    const states = [list.about(previewOnly.id)[0]!, ...list.updates(previewOnly.id)].map((r) => (r.event as { session: SessionInfo }).session);
    for (let i = 1; i < states.length; i++) {
      expect({ ...states[i], preview: [], updatedAt: 0 }).toEqual({ ...states[i - 1], preview: [], updatedAt: 0 });
    }
    expect(Math.min(...gaps(previewTimes))).toBeGreaterThanOrEqual(SESSION_LIST_PREVIEW_MS - GAP_TOLERANCE_MS);
    expect(Math.min(...gaps(titledTimes))).toBeGreaterThanOrEqual(SESSION_LIST_UPDATE_MS - GAP_TOLERANCE_MS);
    if (process.env.WEBMUX_REPORT_FIGURES) {
      const fmt = (t: number[]) => `${t.length - 1} updates over ${Math.round(t.at(-1)! - t[0]!)} ms, gaps ${gaps(t).map(Math.round).join(",")}`;
      console.info(`preview-only session: ${fmt(previewTimes)}\ntitled session: ${fmt(titledTimes)}`);
    }
    await list.close();
  });

  it("ignores what clients send; an oversize frame closes only that socket", async () => {
    const [a, b] = await Promise.all([openList(), openList()]);
    a.ws.send("hello");
    a.ws.send('{"type":"snapshot","sessions":[]}');
    a.ws.send(Buffer.from([0x00, 0xff, 0x13]));
    b.ws.send(Buffer.alloc(2 * 1024 * 1024, 0x61));
    await waitFor(() => b.closed, { message: "oversize client closed" });
    expect(b.closed!.code).toBe(1009);
    const s = await server.createSession({ command: ["sh", "-c", "exit 0"] });
    await waitFor(() => a.latest(s.id)?.status === "exited", { message: "still live after junk" });
    expect(a.closed).toBeNull();
    await a.close();
  });

  it("refuses a handshake without a credential with 401", async () => {
    const ws = new WebSocket(server.url.replace(/^http/, "ws") + "/ws/sessions");
    const status = await new Promise<number>((resolve, reject) => {
      ws.once("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      ws.once("open", () => reject(new Error("opened without a credential")));
      ws.once("error", () => {});
    });
    expect(status).toBe(401);
  });
});

type ListEvents = { created: [ListedSession]; updated: [ListedSession, boolean]; removed: [string] };

/** A stand-alone list endpoint over a fake registry, to reach paths the real server cannot cheaply (capabilities, a stalled reader). */
async function standalone(source: SessionListSource, principal: Principal, options: ConstructorParameters<typeof SessionListStream>[2]) {
  const stream = new SessionListStream(source, new WebSocketAcceptor(), options);
  const http: Server = createServer();
  http.on("upgrade", (req, socket, head) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    stream.handleUpgrade(req, socket, head, { params: {}, url, auth: { principal, via: "bearer" } });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  return {
    stream,
    url,
    async stop() {
      stream.close();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

function fakeSource(sessions: ListedSession[]): SessionListSource & { events: Emitter<ListEvents> } {
  return { events: new Emitter<ListEvents>(), get: (id) => sessions.find((s) => s.id === id), list: () => sessions };
}

function fakeSession(id: string, title: string): ListedSession {
  const info: SessionInfo = {
    id, title, command: ["sh"], cwd: null, pid: null, status: "exited", exitCode: 0, generation: "boot.1",
    createdAt: 1, updatedAt: 1, cols: 80, rows: 24, controller: null, clients: 0, attention: false, preview: [],
  };
  return { id, info: () => ({ ...info, updatedAt: info.updatedAt++ }) };
}

describe("SessionListStream on its own", () => {
  it("refuses a principal without terminal:read with 403", async () => {
    const ep = await standalone(fakeSource([]), { kind: "agent", id: "t1", capabilities: new Set() }, {});
    const ws = new WebSocket(ep.url.replace(/^http/, "ws") + "/ws/sessions");
    const status = await new Promise<number>((resolve) => {
      ws.once("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      ws.once("open", () => resolve(-1));
      ws.once("error", () => {});
    });
    expect(status).toBe(403);
    await ep.stop();
  });

  it("closes a client that stops reading with 4408 once its backlog passes the bound", async () => {
    const big = fakeSession("bigbig01", "x".repeat(256 * 1024));
    const source = fakeSource([big]);
    const ep = await standalone(source, GLOBAL_PRINCIPAL, { maxBufferedBytes: 512 * 1024, windows: { updateMs: 1, previewMs: 1 } });
    const client = await ListClient.open(ep.url, {});
    const healthy = await ListClient.open(ep.url, {});
    expect(ep.stream.size).toBe(2);
    (client.ws as unknown as { _socket: { pause(): void } })._socket.pause();
    // Keep changing the session until the stalled client's kernel buffers and then its queue fill.
    await waitFor(
      () => {
        source.events.emit("updated", big, false);
        return ep.stream.size === 1;
      },
      { timeout: 20_000, message: "stalled client dropped" },
    );
    (client.ws as unknown as { _socket: { resume(): void } })._socket.resume();
    await waitFor(() => client.closed, { message: "close seen by the stalled client" });
    expect(client.closed!.code).toBe(CloseCode.TOO_SLOW);
    expect(healthy.closed).toBeNull();
    expect(healthy.updates(big.id).length).toBeGreaterThan(0);
    await healthy.close();
    await ep.stop();
  });
});

describe("UpdateThrottle", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  function throttle() {
    const t0 = Date.now();
    const flushed: [id: string, atMs: number][] = [];
    const th = new UpdateThrottle((id) => flushed.push([id, Date.now() - t0]), undefined, () => Date.now());
    return { th, flushed, at: (ms: number) => vi.advanceTimersByTime(ms - (Date.now() - t0)) };
  }

  it("coalesces preview-only changes to one per 2 s after the last state sent, the last one included", () => {
    const { th, flushed, at } = throttle();
    th.sent("a");
    for (let ms = 100; ms <= 3000; ms += 100) {
      at(ms);
      th.changed("a", true);
    }
    at(10_000);
    expect(flushed).toEqual([["a", 2000], ["a", 4000]]);
  });

  it("sends a full change on the 500 ms schedule, even inside a preview window", () => {
    const { th, flushed, at } = throttle();
    th.sent("a");
    at(100);
    th.changed("a", true);
    at(300);
    th.changed("a", false);
    at(600);
    th.changed("a", true);
    at(10_000);
    expect(flushed).toEqual([["a", 500], ["a", 2500]]);
  });

  it("sends at once when the window is already open, and throttles sessions independently", () => {
    const { th, flushed, at } = throttle();
    th.sent("a");
    th.sent("b");
    at(1200);
    th.changed("a", false);
    th.changed("b", true);
    at(1200);
    expect(flushed).toEqual([["a", 1200]]);
    at(10_000);
    expect(flushed).toEqual([["a", 1200], ["b", 2000]]);
  });

  it("drops what is pending for a forgotten session and ignores sessions never announced", () => {
    const { th, flushed, at } = throttle();
    th.sent("a");
    th.changed("a", false);
    th.changed("zzz", false);
    at(200);
    th.forget("a");
    th.changed("a", false);
    at(10_000);
    expect(flushed).toEqual([]);
  });
});
