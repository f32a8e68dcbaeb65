/**
 * The code points only to documents a clone of the repository has: a comment names a section of
 * docs/design.md, docs/protocol.md, docs/hybrid.md or docs/agent-api.md, never a file outside the
 * repository, a bare "spec" or an issue number, and every section it names exists.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** The folders that hold code (docs/ itself may quote the original specification). */
const CODE_FOLDERS = ["server", "client", "bin", "bench", "e2e", "scripts"];
const CODE_FILE = /\.(ts|tsx|js|mjs|cjs|json|bash|zsh|sh|css|html)$/;
const SKIPPED_FOLDERS = new Set(["node_modules", "dist", ".cache"]);
const THIS_FILE = relative(ROOT, fileURLToPath(import.meta.url));

/** A reference a newcomer cannot follow: documents outside the repository, a bare "spec", an issue. */
const FOREIGN_REFERENCE = /DESIGN\.md|HYBRID\.md|shared\/spec|spec\/[\w-]+\.zh\.md|\b[Ii]ssues? #?[0-9]|\b[Tt]he issue's\b|\b[Tt]he spec\b|\bDESIGN\b|\bHYBRID\b/;

function codeFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (SKIPPED_FOLDERS.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...codeFiles(path));
    else if (CODE_FILE.test(entry.name)) files.push(path);
  }
  return files;
}

/** Every heading of a docs/ file, without its `#`s. */
function headings(doc: string): string[] {
  const text = readFileSync(join(ROOT, "docs", doc), "utf8");
  return [...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => m[1]!.trim());
}

/** Comment continuation marks folded away, so a section name broken across lines reads whole. */
function foldComments(text: string): string {
  return text.replace(/\n\s*(?:\*(?!\/)|\/\/)\s*/g, " ");
}

const files = CODE_FOLDERS.flatMap((folder) => codeFiles(join(ROOT, folder))).map((path) => relative(ROOT, path));

describe("references to documents", () => {
  it("finds code to check", () => {
    expect(files.length).toBeGreaterThan(100);
  });

  it("never cite a document outside the repository, a bare spec or an issue number", () => {
    const offenders: string[] = [];
    for (const file of files) {
      if (file === THIS_FILE) continue;
      readFileSync(join(ROOT, file), "utf8")
        .split("\n")
        .forEach((line, i) => {
          if (FOREIGN_REFERENCE.test(line)) offenders.push(`${file}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(offenders).toEqual([]);
  });

  it("name sections that exist", () => {
    const sections = new Map<string, string[]>();
    const broken: string[] = [];
    for (const file of files) {
      if (file === THIS_FILE) continue;
      const text = foldComments(readFileSync(join(ROOT, file), "utf8"));
      for (const m of text.matchAll(/docs\/([\w-]+\.md)(?: § |, (?=[A-Z]))(.{0,80})/g)) {
        const [, doc, after] = m as unknown as [string, string, string];
        if (!sections.has(doc)) sections.set(doc, headings(doc));
        if (!sections.get(doc)!.some((heading) => after.startsWith(heading))) broken.push(`${file}: docs/${doc} → "${after}"`);
      }
    }
    expect(broken).toEqual([]);
  });
});
