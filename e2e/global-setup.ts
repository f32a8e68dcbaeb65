import { spawnSync } from "node:child_process";
import { accessSync, constants, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import config from "../playwright.config.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const BUILT_SHELL = join(ROOT, "dist/client/index.html");
/** Everything the client build reads: a change in any of them makes dist/client stale. */
const BUILD_INPUTS = ["client", "public", "server/contract", "vite.config.ts"];
/** Tests beside the contract are not part of the bundle. */
const NOT_AN_INPUT = /\.test\.ts$/;

/**
 * Runs once before the e2e specs: the server serves dist/client, so a missing or stale
 * build would test yesterday's client. `npm test` has just built it; a bare
 * `playwright test` after editing the client rebuilds here.
 */
export default function globalSetup(): void {
  const chromium = config.use?.launchOptions?.executablePath;
  if (chromium) {
    try {
      accessSync(chromium, constants.X_OK);
    } catch {
      throw new Error(`${chromium} is missing: install Debian's chromium package (apt-get install chromium).`);
    }
  }
  const builtAt = mtimeOf(BUILT_SHELL);
  const newestInput = Math.max(...BUILD_INPUTS.map((input) => newestMtime(join(ROOT, input))));
  if (builtAt !== null && builtAt >= newestInput) return;
  console.log(builtAt === null ? "e2e: building the client (no dist/client yet)" : "e2e: rebuilding the stale client");
  const build = spawnSync(process.execPath, [join(ROOT, "node_modules/vite/bin/vite.js"), "build"], {
    cwd: ROOT,
    stdio: "inherit",
  });
  if (build.status !== 0) throw new Error(`vite build failed (exit ${build.status ?? build.signal})`);
}

function mtimeOf(path: string): number | null {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return null;
  }
}

function newestMtime(path: string): number {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (stat === undefined || NOT_AN_INPUT.test(path)) return 0;
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}
