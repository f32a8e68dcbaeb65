import { accessSync, constants } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import config from "./playwright.config.ts";
import { buildClient, clientBuildIsStale } from "../server/cli/build-client.ts";

const CLIENT_DIST = join(fileURLToPath(new URL("..", import.meta.url)), "dist/client");

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
  if (!clientBuildIsStale(CLIENT_DIST)) return;
  console.log("e2e: building the client (none yet, or older than its sources)");
  buildClient();
}
