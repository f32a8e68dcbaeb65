import { expectNoSessionHostLeft, TEST_RUN_VARIABLE } from "../server/testing/leftover-hosts.ts";

/**
 * Runs once after the e2e specs: no session host of this run may outlive it (each test's fixture
 * checks its own data dir; this catches a host started any other way).
 */
export default async function globalTeardown(): Promise<void> {
  const run = process.env[TEST_RUN_VARIABLE];
  if (run) await expectNoSessionHostLeft({ run });
}
