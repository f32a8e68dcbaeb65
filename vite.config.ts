import { fileURLToPath } from "node:url";
import type { UserConfig } from "vite";
import { defineConfig } from "vitest/config";
import { VitePWA } from "vite-plugin-pwa";
import solid from "vite-plugin-solid";

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));

/** Where `vite` (dev) forwards /api and /ws: a running `webmux serve`, 8999 being its default port. */
const DEV_BACKEND = process.env.WEBMUX_DEV_BACKEND ?? "http://127.0.0.1:8999";

/**
 * `vitest run`: the server, client, CLI and bench unit and integration tests, in Node. The app's
 * plugins stay out of it: vite-plugin-solid would force jsdom and the browser build of `ws`.
 */
const TEST_CONFIG: UserConfig = {
  root: here("."),
  test: {
    include: ["server/**/*.test.ts", "client/**/*.test.ts", "bin/**/*.test.ts", "bench/**/*.test.ts"],
    environment: "node",
    // every test leaves no session host behind (server/testing/leftover-hosts.ts)
    setupFiles: ["server/testing/vitest-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
  },
};

// The server serves dist/client as the app shell; public/ holds the manifest and icons.
const APP_CONFIG: UserConfig = {
  root: here("./client"),
  publicDir: here("./public"),
  plugins: [
    solid(),
    // The service worker precaches the app shell so the app opens offline (issue 10); the
    // manifest is public/manifest.webmanifest, linked from index.html.
    VitePWA({
      registerType: "autoUpdate",
      injectRegister: "script",
      manifest: false,
      workbox: {
        globPatterns: ["**/*.{js,css,html,svg,png,webmanifest}"],
        navigateFallback: "/index.html",
        navigateFallbackDenylist: [/^\/api\//, /^\/ws\//],
        clientsClaim: true,
        skipWaiting: true,
        // Tapping a notification opens its session (public/notification-sw.js).
        importScripts: ["notification-sw.js"],
      },
    }),
  ],
  build: {
    outDir: here("./dist/client"),
    emptyOutDir: true,
  },
  server: {
    proxy: {
      "/api": { target: DEV_BACKEND },
      "/ws": { target: DEV_BACKEND, ws: true },
    },
  },
};

// Vitest marks its own process; `vite build` and `vite` (dev) get the app.
export default defineConfig(process.env.VITEST ? TEST_CONFIG : APP_CONFIG);
