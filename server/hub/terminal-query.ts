import { randomBytes } from "node:crypto";
import { isValidClientId, isValidGeneration, parseOffset, sanitizeLabel } from "../contract/protocol.ts";

/** The query of /ws/s/{id}, validated as the spec says: a malformed parameter is ignored. */
export type TerminalQuery = {
  clientId: string;
  /** true when the client sent no valid ID and the server made one up */
  generatedClientId: boolean;
  label: string;
  /** the resume point, only when both halves are valid */
  resume: { generation: string; offset: number } | null;
  /** `history=0`: the spec's literal modes-only snapshot after truncation */
  history: boolean;
};

export function parseTerminalQuery(params: URLSearchParams): TerminalQuery {
  const rawClient = params.get("client");
  const clientValid = isValidClientId(rawClient);
  const generation = params.get("generation");
  const offset = parseOffset(params.get("offset"));
  return {
    clientId: clientValid ? rawClient! : `srv-${randomBytes(12).toString("base64url")}`,
    generatedClientId: !clientValid,
    label: sanitizeLabel(params.get("label")),
    resume: isValidGeneration(generation) && offset !== null ? { generation: generation!, offset } : null,
    history: params.get("history") !== "0",
  };
}
