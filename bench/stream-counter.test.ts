import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { encodeExit, encodeOutput, encodePosition, encodeSnapshot, type PositionPayload } from "../server/contract/index.ts";
import { OUTPUT_TAIL_BYTES, StreamCounter } from "./stream-counter.ts";
import { encodeServerFrame, WsOpcode } from "../server/testing/ws-frame-parser.ts";

/** A StreamCounter that records what the connection would have to answer. */
class RecordingCounter extends StreamCounter {
  readonly pings: string[] = [];
  readonly closes: number[] = [];
  protected override pinged(payload: Uint8Array): void {
    this.pings.push(Buffer.from(payload).toString("latin1"));
  }
  protected override closeReceived(code: number): void {
    this.closes.push(code);
  }
}

const binary = (frame: Uint8Array) => encodeServerFrame(WsOpcode.BINARY, frame);
const text = (length: number, seed: number) => Buffer.from(Array.from({ length }, (_, i) => 0x21 + ((i * 7 + seed) % 90)));

const position: PositionPayload = { generation: "g-1", mode: "reset", start: 0, end: 1000, truncated: false };
// WebSocket payload lengths (opcode + output) on both sides of the 126 and 65536 length forms.
const outputs = [0, 1, 124, 125, 126, 65534, 65535, 300_000].map((n, i) => text(n, i));
const allOutput = Buffer.concat(outputs);
const fragmented = encodeOutput(text(5000, 99));

/** position, snapshot, the outputs (one fragmented around a ping), exit, close 4408. */
const stream = Buffer.concat([
  binary(encodePosition(position)),
  binary(encodeSnapshot("screen")),
  ...outputs.map((o) => binary(encodeOutput(o))),
  encodeServerFrame(WsOpcode.BINARY, fragmented.subarray(0, 1), false),
  encodeServerFrame(WsOpcode.PING, Buffer.from("are you there")),
  encodeServerFrame(WsOpcode.CONTINUATION, fragmented.subarray(1, 3000), false),
  encodeServerFrame(WsOpcode.CONTINUATION, fragmented.subarray(3000)),
  binary(encodeExit({ exitCode: 3 })),
  encodeServerFrame(WsOpcode.CLOSE, Buffer.from([4408 >> 8, 4408 & 0xff, ...Buffer.from("too slow")])),
]);
const outputBytes = allOutput.length + fragmented.length - 1;
const lastOutput = Buffer.concat([allOutput, fragmented.subarray(1)]);

function feed(chunks: Iterable<Uint8Array>): RecordingCounter {
  const counter = new RecordingCounter();
  let refused = 0;
  for (const chunk of chunks) if (!counter.push(chunk)) refused++;
  expect(refused).toBe(0);
  return counter;
}

function expectCounted(counter: RecordingCounter): void {
  expect(counter.invalidFrames).toEqual([]);
  expect(counter.position).toEqual(position);
  expect(counter.outputBytes).toBe(outputBytes);
  expect(counter.outputFrames).toBe(outputs.length + 1);
  expect(counter.offset).toBe(position.end + outputBytes);
  expect(counter.snapshots).toBe(1);
  expect(counter.snapshotBytes).toBe("screen".length);
  expect(counter.outputTail(40)).toBe(lastOutput.subarray(-40).toString("latin1"));
  expect(counter.outputTail(OUTPUT_TAIL_BYTES)).toBe(lastOutput.subarray(-OUTPUT_TAIL_BYTES).toString("latin1"));
  expect(counter.exitCode).toBe(3);
  expect(counter.pings).toEqual(["are you there"]);
  expect(counter.closes).toEqual([4408]);
  expect(counter.closeCode).toBe(4408);
}

describe("StreamCounter", () => {
  it("counts every output byte, keeps the JSON frames and the tail, read whole", () => {
    expectCounted(feed([stream]));
  });

  it("counts the same fed byte by byte (headers split across every chunk boundary)", () => {
    expectCounted(feed((function* () {
      for (let i = 0; i < stream.length; i++) yield stream.subarray(i, i + 1);
    })()));
  });

  it("counts the same however the stream is cut into chunks", () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: stream.length - 1 }), { maxLength: 40 }), (cuts) => {
        const points = [0, ...cuts.sort((a, b) => a - b), stream.length];
        expectCounted(feed(points.slice(1).map((end, i) => stream.subarray(points[i]!, end))));
      }),
      { numRuns: 200 },
    );
  });

  it("continues from the requested offset on an append position", () => {
    const counter = new StreamCounter(700);
    counter.push(binary(encodePosition({ generation: "g-1", mode: "append", start: 700, end: 1000, truncated: false })));
    counter.push(binary(encodeOutput("x".repeat(300))));
    expect(counter.offset).toBe(1000);
    expect(counter.outputTail(3)).toBe("xxx");
  });

  it("reports an undecodable JSON frame and a protocol error, then stops", () => {
    const counter = new StreamCounter();
    expect(counter.push(binary(Uint8Array.from([0x04, 0x7b])))).toBe(true);
    expect(counter.invalidFrames).toHaveLength(1);
    expect(counter.push(Buffer.from([0x82, 0x81, 1, 2, 3, 4, 0]))).toBe(false);
    expect(counter.push(binary(encodeOutput("x")))).toBe(false);
    expect(counter.invalidFrames).toEqual([expect.any(String), "masked frame from the server"]);
    expect(counter.outputBytes).toBe(0);
  });
});
