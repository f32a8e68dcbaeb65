export type AgentCliName = "claude" | "codex";
export const AGENT_CLIS: Record<AgentCliName, { package: string; version: string; bin: string }>;
export function agentClisCache(env?: NodeJS.ProcessEnv): string;
export function agentCliPath(name: AgentCliName, env?: NodeJS.ProcessEnv): string;
export function ensureAgentCli(name: AgentCliName, env?: NodeJS.ProcessEnv): { path: string } | { skip: string };
