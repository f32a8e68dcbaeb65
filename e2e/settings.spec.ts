/**
 * The settings page: the Network compression toggle changes what every WebSocket negotiates; the
 * Agent API switch follows /ws/settings; tokens are created (secret shown once), listed, revoked.
 */
import type { Page } from "@playwright/test";
import { expect, test } from "./fixtures.ts";
import { createSession, logIn, openTerminal } from "./terminal-helpers.ts";

/** `Sec-WebSocket-Extensions` of every handshake answer, by URL path (CDP sees the headers). */
async function recordExtensions(page: Page): Promise<{ path: string; extensions: string }[]> {
  const seen: { path: string; extensions: string }[] = [];
  const cdp = await page.context().newCDPSession(page);
  const urls = new Map<string, string>();
  cdp.on("Network.webSocketCreated", (event: { requestId: string; url: string }) => urls.set(event.requestId, event.url));
  cdp.on("Network.webSocketHandshakeResponseReceived", (event: { requestId: string; response: { headers: Record<string, string> } }) => {
    const headers = Object.fromEntries(Object.entries(event.response.headers).map(([k, v]) => [k.toLowerCase(), v]));
    seen.push({ path: new URL(urls.get(event.requestId) ?? "ws://x/").pathname, extensions: headers["sec-websocket-extensions"] ?? "" });
  });
  await cdp.send("Network.enable");
  return seen;
}

test("the compression toggle changes the negotiated extension of every socket", async ({ page, server }) => {
  const session = await createSession(server);
  await logIn(page.context(), server);
  const seen = await recordExtensions(page);
  await openTerminal(page, server, session.id);
  await expect.poll(() => seen.find((s) => s.path.startsWith("/ws/s/"))?.extensions ?? null).toBe("");

  await page.goto(server.url + "/settings");
  await page.getByLabel(/Compress WebSocket traffic/).check();
  await openTerminal(page, server, session.id);
  await expect.poll(() => seen.filter((s) => s.path.startsWith("/ws/s/")).at(-1)?.extensions ?? "").toMatch(/permessage-deflate/);
  await page.goto(server.url + "/");
  await expect.poll(() => seen.filter((s) => s.path === "/ws/sessions").at(-1)?.extensions ?? "").toMatch(/permessage-deflate/);

  await page.goto(server.url + "/settings");
  await page.getByLabel(/Compress WebSocket traffic/).uncheck();
  const before = seen.length;
  await openTerminal(page, server, session.id);
  await expect.poll(() => seen.slice(before).find((s) => s.path.startsWith("/ws/s/"))?.extensions ?? null).toBe("");
});

test("the Agent API switch follows the server's settings", async ({ page, server }) => {
  await logIn(page.context(), server);
  await page.goto(server.url + "/settings");
  const agentApi = page.getByRole("checkbox", { name: "Agent API" });
  await expect(agentApi).toBeEnabled();
  const initially = await agentApi.isChecked();
  // Changed elsewhere: the page hears it through /ws/settings.
  const put = await server.api("/api/settings", {
    method: "PUT",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ open_api: { enabled: !initially } }),
  });
  expect(put.ok).toBe(true);
  await expect(agentApi).toBeChecked({ checked: !initially });
  // Changed here: the server has it.
  await agentApi.setChecked(initially);
  await expect
    .poll(async () => ((await (await server.api("/api/settings")).json()) as { open_api: { enabled: boolean } }).open_api.enabled)
    .toBe(initially);
});

test("tokens: created with capabilities and expiry, secret shown once, listed, revoked", async ({ page, server }) => {
  await logIn(page.context(), server);
  await page.goto(server.url + "/settings");
  // Agent tokens act only while the Agent API is on.
  await page.getByRole("checkbox", { name: "Agent API" }).setChecked(true);
  await expect.poll(async () => ((await (await server.api("/api/settings")).json()) as { open_api: { enabled: boolean } }).open_api.enabled).toBe(true);
  await page.getByLabel("Token name").fill("phone-agent");
  await page.getByLabel("Expires after").selectOption({ label: "7 days" });
  await page.getByRole("button", { name: "Create token" }).click();
  const secret = (await page.locator(".token-secret__value").textContent()) ?? "";
  expect(secret.length).toBeGreaterThan(10);
  const listed = (await (await server.api("/api/tokens")).json()) as { tokens: { id: string; name: string; capabilities: string[]; expires_at: number | null }[] };
  const token = listed.tokens.find((t) => t.name === "phone-agent")!;
  expect(token.capabilities).toEqual(["terminal:read"]);
  expect(token.expires_at).not.toBeNull();
  await expect(page.locator(`.token[data-token-id="${token.id}"]`)).toContainText("terminal:read");
  // The secret works as a Bearer token for reading sessions.
  const withSecret = await fetch(server.url + "/api/sessions", { headers: { Authorization: `Bearer ${secret}` } });
  expect(withSecret.status).toBe(200);

  await page.getByRole("button", { name: "Done" }).click();
  await expect(page.locator(".token-secret__value")).toHaveCount(0);
  page.once("dialog", (dialog) => void dialog.accept());
  await page.locator(`.token[data-token-id="${token.id}"]`).getByRole("button", { name: "Revoke" }).click();
  await expect(page.locator(`.token[data-token-id="${token.id}"]`)).toHaveCount(0);
  const after = await fetch(server.url + "/api/sessions", { headers: { Authorization: `Bearer ${secret}` } });
  expect(after.status).toBe(401);
});
