import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { DEFAULT_BUFFER_BYTES, INITIAL_STORE_BYTES, RingBuffer, STORE_DOUBLING_LIMIT_BYTES } from "./ring-buffer.ts";

const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);
const text = (b: Uint8Array): string => new TextDecoder().decode(b);

describe("RingBuffer", () => {
  it("defaults to 4 MiB and starts empty at offset 0", () => {
    const ring = new RingBuffer();
    expect(DEFAULT_BUFFER_BYTES).toBe(4 * 1024 * 1024);
    expect(ring.capacity).toBe(DEFAULT_BUFFER_BYTES);
    expect([ring.start, ring.end, ring.truncated]).toEqual([0, 0, false]);
    expect(ring.slice(0).length).toBe(0);
    expect(ring.has(0)).toBe(true);
    expect(ring.has(1)).toBe(false);
  });

  it("rejects a capacity that is not a positive integer", () => {
    expect(() => new RingBuffer(0)).toThrow(RangeError);
    expect(() => new RingBuffer(1.5)).toThrow(RangeError);
  });

  it("appending exactly to capacity keeps everything; one byte more drops the oldest", () => {
    const ring = new RingBuffer(8);
    ring.append(bytes("abcd"));
    ring.append(bytes("efgh"));
    expect([ring.start, ring.end, ring.truncated]).toEqual([0, 8, false]);
    expect(text(ring.slice(0))).toBe("abcdefgh");

    ring.append(bytes("i"));
    expect([ring.start, ring.end, ring.truncated]).toEqual([1, 9, true]);
    expect(text(ring.slice(1))).toBe("bcdefghi");
    expect(() => ring.slice(0)).toThrow(RangeError);
  });

  it("a chunk equal to capacity replaces all retained bytes", () => {
    const ring = new RingBuffer(8);
    ring.append(bytes("xyz"));
    ring.append(bytes("01234567"));
    expect([ring.start, ring.end]).toEqual([3, 11]);
    expect(text(ring.slice(ring.start))).toBe("01234567");
  });

  it("a chunk larger than capacity keeps only its tail", () => {
    const ring = new RingBuffer(8);
    ring.append(bytes("ab"));
    ring.append(bytes("0123456789ABCDEFGHIJ"));
    expect([ring.start, ring.end, ring.truncated]).toEqual([14, 22, true]);
    expect(text(ring.slice(14))).toBe("CDEFGHIJ");
    ring.append(bytes("K"));
    expect(text(ring.slice(ring.start))).toBe("DEFGHIJK");
  });

  it("many one-byte appends keep the last capacity bytes", () => {
    const ring = new RingBuffer(10);
    for (let i = 0; i < 1000; i++) ring.append(Uint8Array.of(i & 0xff));
    expect([ring.start, ring.end]).toEqual([990, 1000]);
    expect(Array.from(ring.slice(990))).toEqual(Array.from({ length: 10 }, (_, k) => (990 + k) & 0xff));
  });

  it("slices across the physical wrap point with exact contents", () => {
    const ring = new RingBuffer(8);
    ring.append(bytes("abcdef"));
    ring.append(bytes("ghij")); // "gh" lands at the end of the store, "ij" wraps to its front
    expect([ring.start, ring.end]).toEqual([2, 10]);
    expect(text(ring.slice(2))).toBe("cdefghij");
    expect(text(ring.slice(5, 9))).toBe("fghi");
    expect(text(ring.slice(7, 8))).toBe("h");
    expect(text(ring.slice(8, 10))).toBe("ij");
    expect(text(ring.slice(10))).toBe("");
  });

  it("has() is true on [start, end] and false just outside", () => {
    const ring = new RingBuffer(4);
    ring.append(bytes("abcdef"));
    expect([ring.start, ring.end]).toEqual([2, 6]);
    expect(ring.has(1)).toBe(false);
    expect(ring.has(2)).toBe(true);
    expect(ring.has(6)).toBe(true);
    expect(ring.has(7)).toBe(false);
    expect(ring.has(2.5)).toBe(false);
  });

  it("slice() throws RangeError outside the retained range or for a reversed range", () => {
    const ring = new RingBuffer(4);
    ring.append(bytes("abcdef"));
    expect(() => ring.slice(1)).toThrow(RangeError);
    expect(() => ring.slice(2, 7)).toThrow(RangeError);
    expect(() => ring.slice(5, 4)).toThrow(RangeError);
    expect(() => ring.slice(NaN)).toThrow(RangeError);
  });

  it("slice() returns a copy that later appends do not change", () => {
    const ring = new RingBuffer(4);
    ring.append(bytes("abcd"));
    const copy = ring.slice(0);
    ring.append(bytes("wxyz"));
    expect(text(copy)).toBe("abcd");
  });

  it("reset() starts a new generation at offset 0", () => {
    const ring = new RingBuffer(4);
    ring.append(bytes("abcdef"));
    ring.reset();
    expect([ring.start, ring.end, ring.truncated]).toEqual([0, 0, false]);
    ring.append(bytes("xy"));
    expect(text(ring.slice(0))).toBe("xy");
  });

  it("keeps every byte while its store doubles, jumps to capacity and wraps", () => {
    const capacity = 3 * STORE_DOUBLING_LIMIT_BYTES + 4321;
    const ring = new RingBuffer(capacity);
    const all = Buffer.from(Array.from({ length: 3 * capacity }, (_, i) => (i * 7 + (i >> 12)) & 0xff));
    // Reads of varied sizes, as a PTY delivers them; checked at every stage of the store.
    let at = 0;
    for (let n = 1; at < all.length; n = (n * 5 + 3) % 9001) {
      const chunk = all.subarray(at, Math.min(all.length, at + n + 1));
      ring.append(chunk);
      at += chunk.length;
      const from = Math.max(0, at - capacity);
      if (n % 7 === 0 || at === all.length) {
        expect(ring.start).toBe(from);
        expect(Buffer.from(ring.slice(from, at)).equals(all.subarray(from, at))).toBe(true);
      }
    }
    expect(ring.truncated).toBe(true);
  });

  it("500 000 numbered lines through a small ring keep the exact tail", () => {
    const capacity = 3 * INITIAL_STORE_BYTES + 123; // grows through several store sizes before wrapping
    const ring = new RingBuffer(capacity);
    const lines: string[] = [];
    for (let n = 1; n <= 500_000; n++) {
      const line = `line ${n}\n`;
      lines.push(line);
      ring.append(bytes(line));
    }
    const all = Buffer.from(lines.join(""));
    expect(ring.end).toBe(all.length);
    expect(ring.start).toBe(all.length - capacity);
    expect(Buffer.from(ring.slice(ring.start)).equals(all.subarray(all.length - capacity))).toBe(true);
    expect(text(ring.slice(ring.end - "line 500000\n".length))).toBe("line 500000\n");
  });

  it("matches a byte-array model for any sequence of appends", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 3 * INITIAL_STORE_BYTES }),
        fc.array(fc.integer({ min: 0, max: 4 * INITIAL_STORE_BYTES }), { maxLength: 30 }),
        (capacity, sizes) => {
          const ring = new RingBuffer(capacity);
          const model: number[] = [];
          let seq = 0;
          for (const size of sizes) {
            const chunk = new Uint8Array(size);
            for (let k = 0; k < size; k++) chunk[k] = seq++ & 0xff;
            ring.append(chunk);
            for (const b of chunk) model.push(b);
            const kept = model.slice(Math.max(0, model.length - capacity));
            expect(ring.end).toBe(model.length);
            expect(ring.start).toBe(model.length - kept.length);
            expect(Buffer.from(ring.slice(ring.start)).equals(Buffer.from(kept))).toBe(true);
            const mid = ring.start + Math.floor(kept.length / 3);
            expect(Buffer.from(ring.slice(mid, mid + Math.floor(kept.length / 3))).equals(
              Buffer.from(kept.slice(mid - ring.start, mid - ring.start + Math.floor(kept.length / 3))),
            )).toBe(true);
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it("an idle session's ring costs kilobytes, not its capacity", () => {
    const count = 200;
    const before = process.memoryUsage().arrayBuffers;
    const rings: RingBuffer[] = [];
    for (let i = 0; i < count; i++) {
      const ring = new RingBuffer();
      ring.append(bytes("user@host:~$ ")); // a prompt, as an idle shell leaves it
      rings.push(ring);
    }
    const perRing = (process.memoryUsage().arrayBuffers - before) / count;
    expect(rings.every((r) => r.end === 13)).toBe(true);
    expect(perRing).toBeLessThan(64 * 1024);
  });

  it("restores a run taken over from the session host at the same offsets, keeping only the tail past its capacity", () => {
    const ring = new RingBuffer(8);
    ring.restore(1000, bytes("abcdef"));
    expect([ring.start, ring.end, ring.truncated]).toEqual([1000, 1006, true]);
    expect(new TextDecoder().decode(ring.slice(1000))).toBe("abcdef");
    ring.append(bytes("ghij"));
    expect([ring.start, ring.end]).toEqual([1002, 1010]);
    expect(new TextDecoder().decode(ring.slice(1002))).toBe("cdefghij");
    ring.restore(0, bytes("0123456789"));
    expect([ring.start, ring.end]).toEqual([2, 10]);
    expect(() => ring.restore(-1, bytes("x"))).toThrow(RangeError);
  });

  describe("lastAppended", () => {
    it("is a view of the store holding the bytes just appended, not a copy", () => {
      const ring = new RingBuffer(1024);
      ring.append(bytes("hello "));
      ring.append(bytes("world"));
      const view = ring.lastAppended(5, 0)!;
      expect(text(view)).toBe("world");
      expect(view.length).toBe(5);
      ring.append(bytes("!"));
      expect(text(ring.lastAppended(6, 0)!)).toBe("world!");
    });

    it("is a Buffer, whose indexOf the scanner's skip over text relies on to be memchr", () => {
      const ring = new RingBuffer(STORE_DOUBLING_LIMIT_BYTES * 4);
      ring.append(bytes("a\x1b[m"));
      expect(Buffer.isBuffer(ring.lastAppended(4, 0))).toBe(true);
      ring.append(new Uint8Array(STORE_DOUBLING_LIMIT_BYTES * 2)); // past the doubling: the store at its full capacity
      ring.append(bytes("b\x1b[m"));
      expect(Buffer.isBuffer(ring.lastAppended(4, 0))).toBe(true);
    });

    it("stays as it was while the store grows and after a reset", () => {
      const ring = new RingBuffer(STORE_DOUBLING_LIMIT_BYTES * 4);
      ring.append(bytes("first"));
      const view = ring.lastAppended(5, 0)!;
      ring.append(new Uint8Array(INITIAL_STORE_BYTES * 3).fill(0x2e)); // grows, copying into a new store
      expect(text(view)).toBe("first");
      ring.reset();
      ring.append(bytes("other"));
      expect(text(view)).toBe("first");
    });

    it("is null when the bytes are cut by the wrap, or would be written over sooner than asked", () => {
      const ring = new RingBuffer(16);
      ring.append(bytes("0123456789ab")); // 12 of 16
      ring.append(bytes("cdefgh")); // wraps: "cdef" at the end of the store, "gh" at its start
      expect(ring.lastAppended(6, 0)).toBeNull();
      expect(text(ring.lastAppended(2, 0)!)).toBe("gh");
      expect(ring.lastAppended(2, 14)).not.toBeNull(); // 14 more bytes leave "gh" alone
      expect(ring.lastAppended(2, 15)).toBeNull();
      expect(ring.lastAppended(17, 0)).toBeNull();
      expect(ring.lastAppended(0, 0)).toBeNull();
    });

    it("is unchanged until `untouchedFor` more bytes were appended (property)", () => {
      fc.assert(
        fc.property(
          fc.integer({ min: 8, max: 256 }),
          fc.array(fc.uint8Array({ minLength: 1, maxLength: 64 }), { minLength: 1, maxLength: 60 }),
          fc.integer({ min: 0, max: 64 }),
          (capacity, chunks, untouchedFor) => {
            const ring = new RingBuffer(capacity);
            const held: { view: Uint8Array; copy: Uint8Array; until: number }[] = [];
            let appended = 0;
            for (const chunk of chunks) {
              ring.append(chunk);
              appended += chunk.length;
              for (const h of held) if (appended <= h.until) expect(new Uint8Array(h.view)).toEqual(h.copy);
              const view = ring.lastAppended(chunk.length, untouchedFor);
              if (view) {
                expect(new Uint8Array(view)).toEqual(chunk);
                held.push({ view, copy: chunk.slice(), until: appended + untouchedFor });
              }
            }
          },
        ),
      );
    });
  });
});
