import { createHash } from "node:crypto";
import type { TerminalClient } from "./terminal-client.ts";

/** Bytes per hashed range: a mismatch is reported within 64 KiB, not somewhere in 50 MB. */
export const HASH_RANGE_BYTES = 64 * 1024;

/** SHA-256 of each HASH_RANGE_BYTES range of `bytes`, in order. */
export function rangeHashes(bytes: Uint8Array, rangeBytes = HASH_RANGE_BYTES): string[] {
  const out: string[] = [];
  for (let at = 0; at < bytes.length; at += rangeBytes) {
    out.push(createHash("sha256").update(bytes.subarray(at, Math.min(bytes.length, at + rangeBytes))).digest("hex").slice(0, 16));
  }
  return out;
}

/** Throws, naming the first range and byte that differ, unless `actual` and `expected` are the same bytes. */
export function assertSameBytes(actual: Uint8Array, expected: Uint8Array, what: string): void {
  const got = rangeHashes(actual);
  const want = rangeHashes(expected);
  const range = got.findIndex((h, i) => h !== want[i]);
  if (range === -1 && got.length === want.length) return;
  const from = (range === -1 ? Math.min(got.length, want.length) : range) * HASH_RANGE_BYTES;
  let at = from;
  while (at < actual.length && at < expected.length && actual[at] === expected[at]) at++;
  const show = (b: Uint8Array) => JSON.stringify(Buffer.from(b.subarray(at, at + 40)).toString("latin1"));
  throw new Error(`${what}: ${actual.length} bytes, expected ${expected.length}; range ${from / HASH_RANGE_BYTES} differs first, at byte ${at}: got ${show(actual)}, want ${show(expected)}`);
}

/**
 * What one connection attached from scratch (reset, not truncated) holds of the stream: the
 * snapshot covers [0, position.end), then every output byte after it.
 */
export function receivedFromStart(client: TerminalClient): Buffer {
  if (client.position?.mode !== "reset" || client.position.truncated) throw new Error(`not a full replay: ${JSON.stringify(client.position)}`);
  return Buffer.concat([client.snapshots[0] ?? Buffer.alloc(0), ...client.allOutput]);
}

/** `count` numbered lines `${tag}-${n}` as a PTY shows them (ONLCR: \n becomes \r\n). */
export function numberedLines(tag: string, count: number, end = ""): Buffer {
  const parts: string[] = [];
  for (let n = 1; n <= count; n++) parts.push(`${tag}-${n}\r\n`);
  return Buffer.from(parts.join("") + end);
}

/** A perl `out($string)` that writes it whole with write(2), bypassing perl's per-line tty buffering. */
export const PERL_OUT = `sub out { my $s = shift; while (length $s) { my $n = syswrite(STDOUT, $s); die "write: $!" unless defined $n; substr($s, 0, $n) = "" } }`;

/** Prints READY, then every chunk it reads from the terminal as hex (`GOT:…`): anything that reached the PTY shows. */
export const HEX_READER = `stty raw -echo; exec perl -e '$|=1; print "READY\\n"; while (sysread(STDIN, my $b, 65536)) { print "GOT:", unpack("H*", $b), "\\n" }'`;
