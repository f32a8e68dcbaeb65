/**
 * The layers of docs/design.md § Parts and layers, checked on the import graph so a forbidden edge
 * cannot come back: every import of every server file is read (TypeScript's own pre-parser) and
 * resolved, and each rule names the edges it forbids.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const SERVER = fileURLToPath(new URL("..", import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : sourceFiles(path);
    return /\.(ts|mts|js|mjs)$/.test(entry.name) && !entry.name.endsWith(".d.ts") ? [path] : [];
  });
}

/** A file's imports: server-relative paths for relative ones, the specifier itself for packages and node: modules. */
function importsOf(file: string): string[] {
  const info = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
  return info.importedFiles.map(({ fileName }) => (fileName.startsWith(".") ? relative(SERVER, resolve(dirname(file), fileName)) : fileName));
}

const graph = new Map(sourceFiles(SERVER).map((file) => [relative(SERVER, file), importsOf(file)]));
const isTest = (file: string) => /\.test\.ts$/.test(file) || file.startsWith("testing/") || file.includes("/testing/");
const productFiles = [...graph.keys()].filter((file) => !isTest(file));

/** Every import of `files` (product code only) that `allowed` refuses, as "from → to". */
function forbiddenEdges(files: string[], allowed: (target: string, from: string) => boolean): string[] {
  return files.flatMap((from) => (graph.get(from) ?? []).filter((to) => !allowed(to, from)).map((to) => `${from} → ${to}`));
}

/** The files `roots` reach through relative imports. */
function reach(roots: string[]): string[] {
  const seen = new Set<string>();
  const stack = [...roots];
  while (stack.length > 0) {
    const file = stack.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const to of graph.get(file) ?? []) if (graph.has(to)) stack.push(to);
  }
  return [...seen];
}

/**
 * The repository's top level, as docs/design.md § Parts and layers fixes it: the product's own
 * folders and its three configs, besides the README, the lockfile and dot-files.
 */
const TOP_LEVEL = ["package.json", "package-lock.json", "vite.config.ts", "tsconfig.json", "README.md", "client", "server", "e2e", "public", "docs", "bench", "bin", "scripts"];

const under = (folder: string) => (path: string) => path.startsWith(`${folder}/`);
const isPackage = (target: string) => !graph.has(target);

describe("layers", () => {
  it("reads the server's import graph", () => {
    expect(graph.get("server.ts")).toContain("hub/terminal-hub.ts");
    expect(productFiles.length).toBeGreaterThan(100);
  });

  it("contract/ imports only contract/: no node:, Bun, DOM or package", () => {
    expect(forbiddenEdges(productFiles.filter(under("contract")), under("contract"))).toEqual([]);
  });

  it("vt/ (the shared VT code) imports only vt/ and contract/", () => {
    expect(forbiddenEdges(productFiles.filter(under("vt")), (to) => under("vt")(to) || under("contract")(to))).toEqual([]);
  });

  it("the CLI's remote commands reach only the contract, the shared VT code, the CLI, the token file, the host protocol's pure codec and the host's data-dir layout", () => {
    const roots = ["cli/attach-command.ts", "cli/move-command.ts", "cli/session-commands.ts", "cli/token-command.ts"];
    for (const root of roots) expect(graph.has(root), root).toBe(true);
    const reached = reach(roots).filter((file) => !isPackage(file));
    const allowed = (file: string) => ["cli", "contract", "vt"].some((folder) => under(folder)(file)) || file === "store/global-token.ts" || file === "store/json-file.ts" || file === "host/protocol.ts" || file === "host/host-dir.ts";
    expect(reached.filter((file) => !allowed(file))).toEqual([]);
    // …and of the CLI only its client side, never the serve side that loads the server.
    expect(reached.filter((file) => /^cli\/(serve|host-command|build-client)/.test(file))).toEqual([]);
  });

  it("the session core knows nothing of WebSockets, HTTP or the endpoints", () => {
    const forbidden = (to: string) => to === "ws" || ["hub", "http", "agent", "hybrid", "cli", "store"].some((folder) => under(folder)(to));
    expect(forbiddenEdges(productFiles.filter(under("session")), (to) => !forbidden(to))).toEqual([]);
  });

  it("only tests reach into a session's mirror (Session.mirrorForFaultTests)", () => {
    const reaching = productFiles.filter((file) => file !== "session/session.ts" && readFileSync(join(SERVER, file), "utf8").includes("mirrorForFaultTests"));
    expect(reaching).toEqual([]);
  });

  it("store/ does not import http/ (or any endpoint)", () => {
    const forbidden = (to: string) => ["http", "hub", "agent", "hybrid", "cli"].some((folder) => under(folder)(to)) || to === "server.ts";
    expect(forbiddenEdges(productFiles.filter(under("store")), (to) => !forbidden(to))).toEqual([]);
  });

  it("debug routes sit with the composition root: http/ neither serves them nor reads the hub's endpoints", () => {
    const httpFiles = productFiles.filter(under("http"));
    expect(httpFiles.filter((file) => readFileSync(join(SERVER, file), "utf8").includes("/api/debug"))).toEqual([]);
    expect(forbiddenEdges(httpFiles, (to) => to !== "hub/terminal-hub.ts" && to !== "hub/accept.ts" && to !== "debug-routes.ts")).toEqual([]);
  });

  it("the repository's top level holds only the product's folders and configs", () => {
    const tracked = execFileSync("git", ["ls-files"], { cwd: join(SERVER, ".."), encoding: "utf8" }).split("\n").filter(Boolean);
    const top = new Set(tracked.map((path) => path.split("/")[0]!).filter((name) => !name.startsWith(".")));
    expect([...top].filter((name) => !TOP_LEVEL.includes(name))).toEqual([]);
  });
});
