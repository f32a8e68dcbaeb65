/**
 * readIntoOwnBuffer on real TCP sockets: every byte in order as copies of the reused buffer, no
 * delivery while paused, the end of the stream as before. (node-pty.test.ts covers it under a PTY.)
 */
import { connect, createServer, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { waitFor } from "../testing/wait.ts";
import { OWN_READ_BUFFER_BYTES, readIntoOwnBuffer } from "./own-read-buffer.ts";

describe("readIntoOwnBuffer", () => {
  /** A connected pair of real TCP sockets: `reader` is the one switched to the own buffer. */
  async function socketPair(): Promise<{ reader: Socket; writer: Socket; close: () => Promise<void> }> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const accepted = new Promise<Socket>((resolve) => server.once("connection", resolve));
    const writer = connect((server.address() as { port: number }).port, "127.0.0.1");
    const reader = await accepted;
    return {
      reader,
      writer,
      close: async () => {
        writer.destroy();
        reader.destroy();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      },
    };
  }

  it("delivers every byte in order as copies of its reused buffer, stops on pause and goes on after resume", async () => {
    const { reader, writer, close } = await socketPair();
    try {
      const chunks: Buffer[] = [];
      let dataEvents = 0;
      reader.on("data", () => dataEvents++);
      expect(readIntoOwnBuffer(reader, (chunk) => chunks.push(chunk))).toBe(true);
      expect(readIntoOwnBuffer(reader, () => {})).toBe(false); // already switched
      const received = () => chunks.reduce((n, c) => n + c.length, 0);
      // More than the buffer, so later reads overwrite it: kept chunks must not change.
      const sent = Buffer.from(Array.from({ length: 3 * OWN_READ_BUFFER_BYTES + 123 }, (_, i) => (i * 31) & 0xff));
      writer.write(sent);
      await waitFor(() => received() === sent.length, { message: "every byte" });
      expect(Buffer.concat(chunks).equals(sent)).toBe(true);
      expect(dataEvents).toBe(0);

      reader.pause();
      // On loopback the bytes are in the reader's kernel buffer once the write is done; two turns of
      // the event loop later a reading handle would have been told (its poll phase lies between).
      await new Promise<void>((resolve) => writer.write("after pause", () => resolve()));
      for (let turn = 0; turn < 2; turn++) await new Promise((resolve) => setImmediate(resolve));
      expect(received()).toBe(sent.length);
      reader.resume();
      await waitFor(() => received() === sent.length + "after pause".length, { message: "bytes after resume" });
      expect(Buffer.concat(chunks).subarray(sent.length).toString()).toBe("after pause");
    } finally {
      await close();
    }
  });

  it("lends its buffer itself when asked: every byte in order, each read a view of the same memory", async () => {
    const { reader, writer, close } = await socketPair();
    try {
      const copies: Buffer[] = [];
      const memory = new Set<ArrayBufferLike>();
      expect(readIntoOwnBuffer(reader, (chunk) => (memory.add(chunk.buffer), copies.push(Buffer.from(chunk))), true)).toBe(true);
      const sent = Buffer.from(Array.from({ length: 3 * OWN_READ_BUFFER_BYTES + 77 }, (_, i) => (i * 7) & 0xff));
      writer.write(sent);
      await waitFor(() => copies.reduce((n, c) => n + c.length, 0) === sent.length, { message: "every byte" });
      expect(Buffer.concat(copies).equals(sent)).toBe(true);
      expect(copies.length).toBeGreaterThan(1);
      expect(memory.size).toBe(1);
    } finally {
      await close();
    }
  });

  it("reports the end of the stream as before", async () => {
    const { reader, writer, close } = await socketPair();
    try {
      const chunks: Buffer[] = [];
      expect(readIntoOwnBuffer(reader, (chunk) => chunks.push(chunk))).toBe(true);
      const ended = new Promise<void>((resolve) => reader.once("end", () => resolve()));
      reader.resume();
      writer.end("last words");
      await ended;
      expect(Buffer.concat(chunks).toString()).toBe("last words");
    } finally {
      await close();
    }
  });

  it("leaves a socket it does not recognise alone", () => {
    expect(readIntoOwnBuffer({} as Socket, () => {})).toBe(false);
  });
});

