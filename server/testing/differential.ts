/**
 * The differential tests' one comparison point (docs/design.md § Snapshots): the screen states of
 * several clients of one session, read when every one has rendered everything the session has
 * output so far and nothing arrived while they were read (a program still drawing, less paging, a
 * spinner, would otherwise be compared at two different bytes).
 */
import { parsed, screenState } from "./screen-state.ts";
import type { TerminalClient } from "./terminal-client.ts";
import { waitFor } from "./wait.ts";

export async function statesAtOnePoint(
  sessionEnd: () => number,
  clients: TerminalClient[],
  options: { scrollback: number; timeout: number },
): Promise<string[][]> {
  return waitFor(
    async () => {
      const end = sessionEnd();
      if (!clients.every((c) => c.offset === end)) return null;
      await Promise.all(clients.map((c) => parsed(c.term!)));
      // Read synchronously, so no frame can arrive between the check and the reading.
      if (sessionEnd() !== end || !clients.every((c) => c.offset === end)) return null;
      return clients.map((c) => screenState(c.term!, { scrollback: options.scrollback }));
    },
    { timeout: options.timeout, message: "clients caught up" },
  );
}
