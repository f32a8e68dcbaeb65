import type { AgentAdapter } from "./adapter.ts";
import { ClaudeAdapter } from "./claude.ts";
import { CodexAdapter } from "./codex.ts";

/** The agents a hybrid session can hold, by the name `POST /api/sessions {hybrid: {agent}}` uses. */
export function defaultAdapters(): ReadonlyMap<string, AgentAdapter> {
  const adapters: AgentAdapter[] = [new ClaudeAdapter(), new CodexAdapter()];
  return new Map(adapters.map((a) => [a.name, a]));
}
