/**
 * A hybrid session's record in the session host (docs/design.md, What survives a restart): kept
 * for the next server, also for a session parked at its chat end with no run, carried over a
 * handover to a successor host, and never shown to a one-shot command peer (it holds the hook secret).
 */
import { describe, expect, it } from "vitest";
import { spawnPty } from "../pty/index.ts";
import { HostedSessions, type AdoptedSession } from "./hosted-sessions.ts";
import { PeerRole } from "./protocol.ts";
import { HostRequestError, type HostPeer } from "./session-host.ts";

const peer = (role: PeerRole): HostPeer => ({ send: () => {}, emit: () => {}, role, pid: 1, build: "test", socket: { queuedBytes: 0, socket: { once: () => {} } } as never });
const server = peer(PeerRole.SERVER);
const command = peer(PeerRole.COMMAND);
const meta = { id: "hyb12345", command: ["claude"], cwd: "/", env: {}, createdAt: 1, title: null, hybrid: true };
const record = { agent: "claude", conversationId: "c-1", end: "chat", state: "parked", secret: "s3cret" };

async function sessions(service: HostedSessions, method: "adopt" | "list"): Promise<AdoptedSession[]> {
  const reply = await service.handle(method === "adopt" ? server : command, method, null, new Uint8Array(0));
  return (reply.result as { sessions: AdoptedSession[] }).sessions;
}

describe("a hybrid session's record in the session host", () => {
  it("starts the entry of a session with no run, goes to the adopting server only, keeps the host running until forgotten", async () => {
    const service = new HostedSessions(spawnPty);
    expect(service.holdsWork()).toBe(false);
    await service.handle(server, "hybrid", { meta, cols: 100, rows: 30, state: record }, new Uint8Array(0));
    expect(service.holdsWork()).toBe(true);
    expect(await sessions(service, "adopt")).toMatchObject([{ id: meta.id, cols: 100, rows: 30, run: null, hybridState: record }]);
    expect((await sessions(service, "list"))[0]!.hybridState).toBeNull();
    await service.handle(server, "hybrid", { meta, cols: 100, rows: 30, state: { ...record, end: "terminal" } }, new Uint8Array(0));
    expect((await sessions(service, "adopt"))[0]!.hybridState).toMatchObject({ end: "terminal" });
    await service.handle(server, "forget", { id: meta.id }, new Uint8Array(0));
    expect(service.holdsWork()).toBe(false);
  });

  it("refuses a record that is not an object or is oversized, and a command peer", async () => {
    const service = new HostedSessions(spawnPty);
    const refused = async (params: unknown, from = server) => {
      try {
        await service.handle(from, "hybrid", params, new Uint8Array(0));
        return null;
      } catch (err) {
        return err instanceof HostRequestError ? err.code : "other";
      }
    };
    expect(await refused({ meta, cols: 80, rows: 24, state: "no" })).toBe("BAD_REQUEST");
    expect(await refused({ meta, cols: 80, rows: 24, state: { big: "x".repeat(100_000) } })).toBe("BAD_REQUEST");
    expect(await refused({ meta: { ...meta, id: "../x" }, cols: 80, rows: 24, state: record })).toBe("BAD_REQUEST");
    expect(await refused({ meta, cols: 80, rows: 24, state: record }, command)).toBe("NOT_ALLOWED");
    expect(service.sessionCount()).toBe(0);
  });

  it("goes over a handover to the successor host", async () => {
    const old = new HostedSessions(spawnPty);
    await old.handle(server, "hybrid", { meta, cols: 80, rows: 24, state: record }, new Uint8Array(0));
    const prepared = await old.prepareHandover();
    const successor = new HostedSessions(spawnPty);
    successor.adoptHandover({ ...prepared.document, from: { build: "old", protocol: 1, pid: 1, hostId: "h" } }, prepared.bytes, () => {
      throw new Error("no PTY to adopt");
    });
    prepared.release();
    expect(await sessions(successor, "adopt")).toMatchObject([{ id: meta.id, run: null, hybridState: record }]);
  });
});
