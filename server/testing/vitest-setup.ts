/**
 * Run before every test file (vite.config.ts): each test must leave no session host behind
 * (server/testing/leftover-hosts.ts). Registered first, this afterEach runs after the file's own.
 */
import { afterEach } from "vitest";
import { expectNoSessionHostLeft, testRunMarker } from "./leftover-hosts.ts";

const run = testRunMarker();

afterEach(async () => {
  await expectNoSessionHostLeft({ run });
});
