/**
 * The text the throughput benchmarks `cat`: real source code (TypeScript's own lib files),
 * repeated to the wanted size, so the PTY, the scanner and the headless screen see lines,
 * indentation, tabs and the odd non-ASCII character the way they do in a build log, not the
 * zeros or random bytes that would flatter or punish the parser. Made once per size in a temp
 * dir and reused by later runs.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { MIB } from "./stats.ts";

/** The issues' figure: a 100 MB `cat`. */
export const FULL_CORPUS_BYTES = 100 * MIB;
/** `--quick`: large enough to outlast start-up costs by far, small enough for a fast check. */
export const QUICK_CORPUS_BYTES = 16 * MIB;
/** Distinct source text before it repeats: far more than any buffer on the way (ring 4 MiB). */
const SOURCE_TEXT_BYTES = 8 * MIB;
/** Where corpora live between runs. */
export const CORPUS_DIR = join(tmpdir(), "webmux-bench");
const NEWLINE = 0x0a;

export type Corpus = {
  path: string;
  /** file size */
  bytes: number;
  /** LF count: a PTY with onlcr (the default) prints each as CR LF */
  newlines: number;
  /** what `cat` of this file puts through a default PTY: bytes + newlines */
  ptyBytes: number;
};

function sourceText(): Buffer {
  const root = fileURLToPath(new URL("../node_modules/typescript/lib/", import.meta.url));
  const parts: string[] = [];
  let length = 0;
  for (const name of readdirSync(root).sort()) {
    if (!name.endsWith(".js") && !name.endsWith(".d.ts")) continue;
    const path = join(root, name);
    if (!statSync(path).isFile()) continue;
    const text = readFileSync(path, "utf8").replace(/\r\n?/g, "\n");
    parts.push(text);
    length += text.length;
    if (length >= SOURCE_TEXT_BYTES) break;
  }
  return Buffer.from(parts.join("\n"), "utf8").subarray(0, SOURCE_TEXT_BYTES);
}

function countNewlines(bytes: Uint8Array): number {
  let n = 0;
  let i = bytes.indexOf(NEWLINE);
  while (i !== -1) {
    n++;
    i = bytes.indexOf(NEWLINE, i + 1);
  }
  return n;
}

/** The corpus of exactly `bytes` bytes, written on first use (atomically: temp file, then rename). */
export async function ensureCorpus(bytes: number): Promise<Corpus> {
  mkdirSync(CORPUS_DIR, { recursive: true });
  const path = join(CORPUS_DIR, `corpus-${bytes}.txt`);
  const metaPath = `${path}.json`;
  if (existsSync(path) && existsSync(metaPath) && statSync(path).size === bytes) {
    try {
      const meta = JSON.parse(readFileSync(metaPath, "utf8")) as Corpus;
      if (meta.bytes === bytes && meta.path === path) return meta;
    } catch {
      // rebuilt below
    }
  }
  const text = sourceText();
  const partial = `${path}.${process.pid}.partial`;
  const file = await open(partial, "w");
  let written = 0;
  let newlines = 0;
  try {
    while (written < bytes) {
      const piece = text.subarray(0, Math.min(text.length, bytes - written));
      await file.write(piece);
      newlines += countNewlines(piece);
      written += piece.length;
    }
    await file.sync();
  } finally {
    await file.close();
  }
  renameSync(partial, path);
  const corpus: Corpus = { path, bytes, newlines, ptyBytes: bytes + newlines };
  writeFileSync(metaPath, JSON.stringify(corpus));
  return corpus;
}
