/** The Chromium of the e2e suite (its Playwright launch options), for the benchmarks that paint in a browser. */
import { chromium, type Browser } from "@playwright/test";
import { accessSync, constants } from "node:fs";
import config from "../playwright.config.ts";

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

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ ...launchOptions, executablePath });
}
