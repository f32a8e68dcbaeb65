import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";
import { VitePWA } from "vite-plugin-pwa";
import solid from "vite-plugin-solid";

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));

/** Where `vite` (dev) forwards /api and /ws: a running `webmux serve`, 8999 being its default port. */
const DEV_BACKEND = process.env.WEBMUX_DEV_BACKEND ?? "http://127.0.0.1:8999";

// The server serves dist/client as the app shell; public/ holds the manifest and icons.
export default defineConfig({
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
});
