import { defineConfig } from "@playwright/test";
import { testRunMarker } from "../server/testing/leftover-hosts.ts";

// Every server and session host of this run carries the marker (in the workers' environment too),
// so the global teardown finds a host a test left behind.
testRunMarker();

/** Debian's chromium package: Playwright's own browser downloads cannot work here. */
const CHROMIUM = "/usr/bin/chromium";

/** One test may start a server, a shell and a page; 30 s leaves room on a slow CI box. */
const TEST_TIMEOUT_MS = 30_000;
/** Web-first assertions retry until this; UI reactions to a local server take milliseconds. */
const EXPECT_TIMEOUT_MS = 5_000;

export default defineConfig({
  testDir: ".",
  outputDir: "../test-results",
  globalSetup: "./global-setup.ts",
  globalTeardown: "./global-teardown.ts",
  timeout: TEST_TIMEOUT_MS,
  expect: { timeout: EXPECT_TIMEOUT_MS },
  // Each test starts its own server and PTYs; two at a time keeps CI machines responsive.
  workers: process.env.CI ? 1 : 2,
  forbidOnly: !!process.env.CI,
  retries: 0,
  reporter: "list",
  use: {
    browserName: "chromium",
    headless: true,
    screenshot: "only-on-failure",
    trace: "retain-on-failure",
    launchOptions: {
      executablePath: CHROMIUM,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    },
  },
});
