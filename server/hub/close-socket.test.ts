import { EventEmitter } from "node:events";
import type { WebSocket } from "ws";
import { afterEach, describe, expect, it, vi } from "vitest";
import { closeSocket } from "./close-socket.ts";

/** Just enough of a ws socket: records close/terminate, emits `close` when told. */
class RecordingSocket extends EventEmitter {
  calls: string[] = [];
  constructor(private readonly closeThrows = false) {
    super();
  }
  close(code: number, reason: string): void {
    this.calls.push(`close ${code} ${reason}`);
    if (this.closeThrows) throw new Error("not open");
  }
  terminate(): void {
    this.calls.push("terminate");
  }
}

const asWs = (s: RecordingSocket) => s as unknown as WebSocket;

describe("closeSocket", () => {
  afterEach(() => vi.useRealTimers());

  it("closes with the code and terminates a peer that has not acknowledged within the grace", () => {
    vi.useFakeTimers();
    const ws = new RecordingSocket();
    closeSocket(asWs(ws), 4408, "too slow", 2_000);
    expect(ws.calls).toEqual(["close 4408 too slow"]);
    vi.advanceTimersByTime(1_999);
    expect(ws.calls).toEqual(["close 4408 too slow"]);
    vi.advanceTimersByTime(1);
    expect(ws.calls).toEqual(["close 4408 too slow", "terminate"]);
  });

  it("leaves a socket that closed within the grace alone", () => {
    vi.useFakeTimers();
    const ws = new RecordingSocket();
    closeSocket(asWs(ws), 1001, "server shutting down", 2_000);
    ws.emit("close");
    vi.advanceTimersByTime(10_000);
    expect(ws.calls).toEqual(["close 1001 server shutting down"]);
  });

  it("terminates when the close frame cannot be queued, and sets no timer without a grace", () => {
    vi.useFakeTimers();
    const ws = new RecordingSocket(true);
    closeSocket(asWs(ws), 1001, "bye");
    expect(ws.calls).toEqual(["close 1001 bye", "terminate"]);
    expect(vi.getTimerCount()).toBe(0);
  });
});
