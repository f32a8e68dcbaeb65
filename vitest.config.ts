import { defineConfig } from "vitest/config";

// Server-side tests only: vite-plugin-solid must not be loaded here (it forces
// jsdom and the browser build of `ws`).
export default defineConfig({
  test: {
    include: ["server/**/*.test.ts", "client/**/*.test.ts", "bin/**/*.test.ts", "bench/**/*.test.ts"],
    environment: "node",
    // every test leaves no session host behind (server/testing/leftover-hosts.ts)
    setupFiles: ["server/testing/vitest-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
  },
});
