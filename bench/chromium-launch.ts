/** The Chromium of the e2e suite (its Playwright launch options), for the benchmarks that paint in a browser. */
import { chromium, type Browser } from "@playwright/test";
import { accessSync, constants } from "node:fs";
import config from "../e2e/playwright.config.ts";
import { buildClientIfNeeded } from "../server/cli/build-client.ts";
import { CLIENT_DIST } from "../server/server.ts";
import { hubModuleMissing } from "./hub-probe.ts";

const launchOptions = config.use?.launchOptions ?? {};
const executablePath = launchOptions.executablePath ?? "/usr/bin/chromium";

/** Why the browser benchmarks cannot run, or null when Chromium is installed. */
export function chromiumMissing(): string | null {
  try {
    accessSync(executablePath, constants.X_OK);
    return null;
  } catch {
    return `${executablePath} is missing (apt-get install chromium)`;
  }
}

/** Why a bench that paints the app in Chromium cannot run, or null once the client is built for it. */
export function browserBenchMissing(): string | null {
  const missing = hubModuleMissing() ?? chromiumMissing();
  if (missing) return missing;
  buildClientIfNeeded(CLIENT_DIST);
  return null;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ ...launchOptions, executablePath });
}
