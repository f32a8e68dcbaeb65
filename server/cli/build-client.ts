import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
/** Everything the client build reads: a change in any of them makes dist/client stale. */
export const CLIENT_BUILD_INPUTS = ["client", "public", "vite.config.ts", "server/contract"];
/** Tests beside the client and the contract are not part of the bundle. */
const NOT_AN_INPUT = /\.test\.tsx?$/;

function newestMtime(path: string): number {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (stat === undefined || NOT_AN_INPUT.test(path)) return 0;
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

/** True when `distDir` has no build, or one older than any of its inputs under `root`. */
export function clientBuildIsStale(distDir: string, root = ROOT): boolean {
  const built = statSync(join(distDir, "index.html"), { throwIfNoEntry: false })?.mtimeMs ?? 0;
  return built < Math.max(...CLIENT_BUILD_INPUTS.map((s) => newestMtime(join(root, s))));
}

/** Runs `vite build` in the checkout; throws when it fails. */
export function buildClient(): void {
  const vite = join(ROOT, "node_modules", "vite", "bin", "vite.js");
  const result = spawnSync(process.execPath, [vite, "build", "--logLevel", "warn"], { cwd: ROOT, stdio: ["ignore", "inherit", "inherit"] });
  if (result.status !== 0) throw new Error(`building the web client failed (exit ${result.status ?? result.signal}, see above)`);
}

/** `npm start` builds the client only when its sources are newer than the last build. */
export function buildClientIfNeeded(distDir: string): void {
  if (!clientBuildIsStale(distDir)) return;
  if (!existsSync(join(ROOT, "node_modules", "vite", "bin", "vite.js"))) {
    if (existsSync(join(distDir, "index.html"))) return; // a build exists; without vite we serve it as it is
    throw new Error("the web client is not built and vite is not installed (run `npm install`)");
  }
  process.stderr.write("webmux: building the web client…\n");
  buildClient();
}
