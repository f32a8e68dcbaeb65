/**
 * The handover pipe's messages (docs/design.md, What survives a restart): what the old host writes
 * is what the successor reads however the pipe splits it, and a document that does not hold
 * together is refused with a reason rather than half used.
 */
import { describe, expect, it } from "vitest";
import { encodeHandoverMessage, FIRST_HANDED_FD, HANDOVER_FORMAT, HandoverReader, type HandoverDocument } from "./handover.ts";

const document: HandoverDocument = {
  type: "handover",
  format: HANDOVER_FORMAT,
  from: { build: "webmux 0.1.0", protocol: 1, pid: 42, hostId: "h1" },
  sessions: [
    {
      meta: { id: "abcdefgh", command: ["bash"], cwd: "/", env: { A: "1" }, createdAt: 1, title: null, hybrid: false },
      cols: 80,
      rows: 24,
      submissions: [{ id: "s1", clientId: "c1", createdAt: 2, state: "written" }],
      run: {
        ref: 1,
        generation: "g.1",
        pid: 100,
        status: "running",
        exitCode: null,
        bufferBytes: 1024,
        start: 10,
        end: 15,
        modes: "\x1b[?2004h",
        fd: FIRST_HANDED_FD,
        ptsName: "/dev/pts/9",
        ptyCols: 80,
        ptyRows: 24,
        pausedByServer: false,
        shell: null,
      },
    },
    { meta: { id: "ijklmnop", command: ["sh"], cwd: "/", env: {}, createdAt: 3, title: "t", hybrid: true }, cols: 10, rows: 5, submissions: [], run: null },
  ],
};
const ring = new TextEncoder().encode("hello");

function wire(...parts: Uint8Array[][]): Uint8Array {
  return Buffer.concat(parts.flat());
}

describe("handover pipe", () => {
  it("reads the document, its ring bytes and the exits after it, split at every byte", () => {
    const stream = wire(encodeHandoverMessage(document, ring), encodeHandoverMessage({ type: "exit", pid: 100, exitCode: 7, signal: null }));
    for (const size of [1, 3, 7, stream.length]) {
      const reader = new HandoverReader();
      const out = [];
      for (let at = 0; at < stream.length; at += size) out.push(...reader.push(stream.subarray(at, at + size)));
      expect(out.map((o) => ("message" in o ? { message: o.message, bytes: [...o.bytes] } : o))).toEqual([
        { message: document, bytes: [...ring] },
        { message: { type: "exit", pid: 100, exitCode: 7, signal: null }, bytes: [] },
      ]);
    }
  });

  it("refuses another format, rings that do not add up, and runs without a terminal", () => {
    const read = (doc: unknown, bytes = ring) => new HandoverReader().push(wire(encodeHandoverMessage(doc as HandoverDocument, bytes)))[0];
    expect(read({ ...document, format: HANDOVER_FORMAT + 1 })).toEqual({ invalid: `handover format ${HANDOVER_FORMAT + 1}, this build reads ${HANDOVER_FORMAT}` });
    expect(read(document, ring.subarray(1))).toEqual({ invalid: "the rings add up to 5 bytes, the message has 4" });
    const noFd = structuredClone(document);
    noFd.sessions[0]!.run!.fd = null;
    expect(read(noFd)).toEqual({ invalid: "bad sessions" });
    const lowFd = structuredClone(document);
    lowFd.sessions[0]!.run!.fd = 2;
    expect(read(lowFd)).toEqual({ invalid: "bad sessions" });
    expect(read({ type: "what" })).toEqual({ invalid: "unknown message what" });
    const garbage = Buffer.from([0, 0, 0, 6, 0, 0, 0, 2, 0x7b, 0x7b]);
    expect(new HandoverReader().push(garbage)).toEqual([{ invalid: "malformed JSON" }]);
  });
});
