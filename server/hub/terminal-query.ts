import { randomBytes } from "node:crypto";
import { isValidClientId, isValidGeneration, parseOffset, REPLAY_ACK_PARAM, sanitizeLabel } from "../contract/protocol.ts";
import type { Principal } from "../http/credentials.ts";
import type { ControllerLease } from "../session/controller-lease.ts";

/** The query of /ws/s/{id}, validated as docs/protocol.md § Query parameters says: a malformed parameter is ignored. */
export type TerminalQuery = {
  clientId: string;
  /** true when the client sent no valid ID and the server made one up */
  generatedClientId: boolean;
  label: string;
  /** the resume point, only when both halves are valid */
  resume: { generation: string; offset: number } | null;
  /** `history=0`: the literal modes-only snapshot after truncation (docs/protocol.md § Resume: append, reset, truncated) */
  history: boolean;
  /** `replayAck=1`: the client sends 0x07 once it has parsed each replay */
  replayAck: boolean;
};

export function parseTerminalQuery(params: URLSearchParams): TerminalQuery {
  const rawClient = params.get("client");
  const clientValid = isValidClientId(rawClient);
  const generation = params.get("generation");
  const offset = parseOffset(params.get("offset"));
  return {
    clientId: clientValid ? rawClient! : madeUpClientId(),
    generatedClientId: !clientValid,
    label: sanitizeLabel(params.get("label")),
    resume: isValidGeneration(generation) && offset !== null ? { generation: generation!, offset } : null,
    history: params.get("history") !== "0",
    replayAck: params.get(REPLAY_ACK_PARAM) === "1",
  };
}

/**
 * The client ID a connection of `principal` gets in a session: the one it asked for, unless another
 * principal attached with it first; then one made up, as for a malformed `client=`.
 */
export function bindClientId(query: TerminalQuery, lease: ControllerLease, principal: Principal): string {
  return lease.bindClientId(query.clientId, `${principal.kind}:${principal.id}`) ? query.clientId : madeUpClientId();
}

function madeUpClientId(): string {
  return `srv-${randomBytes(12).toString("base64url")}`;
}
