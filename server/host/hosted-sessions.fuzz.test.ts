/**
 * The host's entry points under hostile input: any frame bytes decode to a message or `invalid`
 * (never a throw), and any request a peer can send is answered or refused with a HostRequestError
 * — never another exception, never a crash of the host. A recording fake PTY stands in for the
 * programs here; the real ones are in survive-restart.test.ts and host-link.test.ts.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { PtyExit, PtyProcess, PtySpawnOptions } from "../pty/pty.ts";
import { HostedSessions } from "./hosted-sessions.ts";
import { decodeHostFrame, HostFrameReader, PeerRole } from "./protocol.ts";
import { HostRequestError, type HostPeer } from "./session-host.ts";

function fakePty(): PtyProcess {
  let onExit: ((e: PtyExit) => void) | null = null;
  return {
    pid: 4242,
    onData: () => {},
    onExit: (l) => (onExit = l),
    exited: new Promise(() => {}),
    write: () => {},
    drained: async () => {},
    resize: () => {},
    pause: () => {},
    resume: () => {},
    kill: () => onExit?.({ exitCode: 129, signal: 1 }),
  };
}

const peer = (role: PeerRole): HostPeer => ({ send: () => {}, emit: () => {}, role, pid: 1, build: "fuzz", socket: { queuedBytes: 0, socket: { once: () => {} } } as never });

const METHODS = ["adopt", "list", "spawn", "resize", "pause", "resume", "signal", "drain", "submit", "meta", "hybrid", "close-streams", "forget", "stop", "nonsense", ""];

const json = fc.jsonValue({ maxDepth: 3 });
const spawnish = fc.record({
  ref: fc.oneof(fc.integer({ min: -2, max: 5 }), json),
  generation: fc.oneof(fc.string(), json),
  bufferBytes: fc.oneof(fc.integer({ min: -1, max: 4096 }), json),
  spawn: fc.oneof(json, fc.record({ command: fc.oneof(fc.array(fc.string()), json), cwd: fc.oneof(fc.constant("/"), json), env: fc.oneof(fc.constant({}), json), cols: fc.oneof(fc.integer(), json), rows: fc.oneof(fc.integer(), json) })),
  meta: fc.oneof(json, fc.record({ id: fc.oneof(fc.constant("abcd1234"), fc.string()), command: fc.array(fc.string()), cwd: fc.string(), env: fc.constant({}), createdAt: fc.integer(), title: fc.oneof(fc.constant(null), fc.string()), hybrid: fc.boolean() })),
  id: fc.oneof(fc.constant("abcd1234"), fc.string()),
  clientId: fc.oneof(fc.string(), json),
  createdAt: fc.oneof(fc.integer(), json),
  signal: fc.oneof(fc.constant("SIGHUP"), fc.string()),
  cols: fc.oneof(fc.integer({ min: -1, max: 300 }), json),
  rows: fc.oneof(fc.integer({ min: -1, max: 300 }), json),
  ptyCols: fc.oneof(fc.integer({ min: -1, max: 300 }), json),
  ptyRows: fc.oneof(fc.integer({ min: -1, max: 300 }), json),
  title: fc.oneof(fc.constant(null), fc.string(), json),
}, { requiredKeys: [] });

describe("session host entry points, fuzzed", () => {
  it("decodes any bytes to a message or invalid, whole or cut into any chunks", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 512 }), fc.array(fc.nat(64), { maxLength: 8 }), (bytes, cuts) => {
        expect(() => decodeHostFrame(bytes)).not.toThrow();
        const reader = new HostFrameReader(1024);
        let at = 0;
        for (const cut of [...cuts, bytes.length]) {
          const next = Math.min(bytes.length, at + cut);
          for (const frame of reader.push(bytes.subarray(at, next))) expect(() => decodeHostFrame(frame)).not.toThrow();
          at = next;
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("answers or refuses any request with a HostRequestError, from a server or a command peer", async () => {
    const service = new HostedSessions((_: PtySpawnOptions) => fakePty());
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...METHODS), fc.oneof(spawnish, json), fc.uint8Array({ maxLength: 64 }), fc.boolean(), async (method, params, data, asServer) => {
        try {
          await service.handle(peer(asServer ? PeerRole.SERVER : PeerRole.COMMAND), method, params, data);
        } catch (err) {
          if (!(err instanceof HostRequestError)) throw err;
        }
        service.input(peer(PeerRole.SERVER), 1, 0, data);
      }),
      { numRuns: 2000 },
    );
    expect(service.sessionCount()).toBeGreaterThanOrEqual(0);
  });
});
