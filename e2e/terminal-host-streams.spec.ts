/**
 * A terminal in Chromium whose stream the session host serves (docs/design.md § The session host
 * serves the streams): the server hands the page's WebSocket to the host after authenticating it
 * (permessage-deflate negotiated there, as Chromium always offers it), so killing the server with
 * SIGKILL does not even drop the connection: the page stays live, typing echoes, and a new server
 * lists the page as the session's controller.
 */
import { expect, test } from "./fixtures.ts";
import { createSession, logIn, openTerminal, stats, typeInTerminal, waitForText } from "./terminal-helpers.ts";

test.use({ sessionHost: true });

test("the server killed while a page types into a session: the page's stream, served by the host, never drops", async ({ page, server }) => {
  const session = await createSession(server);
  await logIn(page.context(), server);
  await openTerminal(page, server, session.id);
  await typeInTerminal(page, "echo first-$((20+1))\r");
  await waitForText(page, "first-21");
  const opensBefore = (await stats(page))!.opens;

  await server.restart({ crash: true });
  // Typed while the new server starts or after: the host serves the same socket throughout.
  await typeInTerminal(page, "echo second-$((40+2))\r");
  await waitForText(page, "second-42");
  const after = (await stats(page))!;
  expect(after.phase).toBe("live");
  expect(after.opens).toBe(opensBefore);
  expect(after.waits).toBe(0);

  const listed = (await (await server.api("/api/sessions")).json()) as { sessions: { id: string; clients: number; controller: { clientId: string } | null }[] };
  const info = listed.sessions.find((s) => s.id === session.id)!;
  expect(info.clients).toBe(1);
  expect(info.controller).not.toBeNull();
});
