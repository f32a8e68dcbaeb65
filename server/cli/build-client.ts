import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const SOURCES = ["client", "public", "vite.config.ts", "server/contract"];

function newestMtime(path: string): number {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

/** `npm start` builds the client only when its sources are newer than the last build. */
export function buildClientIfNeeded(distDir: string): void {
  const index = join(distDir, "index.html");
  const built = existsSync(index) ? statSync(index).mtimeMs : 0;
  const sources = Math.max(...SOURCES.map((s) => newestMtime(join(ROOT, s))));
  if (built >= sources) return;
  const vite = join(ROOT, "node_modules", "vite", "bin", "vite.js");
  if (!existsSync(vite)) {
    if (built) return; // a build exists; without vite we serve it as it is
    throw new Error("the web client is not built and vite is not installed (run `npm install`)");
  }
  process.stderr.write("webmux: building the web client…\n");
  const result = spawnSync(process.execPath, [vite, "build", "--logLevel", "warn"], { cwd: ROOT, stdio: ["ignore", "inherit", "inherit"] });
  if (result.status !== 0) throw new Error("building the web client failed (see above)");
}
