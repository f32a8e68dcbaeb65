import { randomBytes } from "node:crypto";
import { readTerminalQuery, type TerminalQueryFields } from "../contract/terminal-query.ts";
import type { Principal } from "../http/credentials.ts";
import type { ControllerLease } from "../session/controller-lease.ts";

/** The query of /ws/s/{id} as the contract reads it, with a client ID made up where none was valid. */
export type TerminalQuery = Omit<TerminalQueryFields, "clientId"> & {
  clientId: string;
  /** true when the client sent no valid ID and the server made one up */
  generatedClientId: boolean;
};

export function parseTerminalQuery(params: URLSearchParams): TerminalQuery {
  const fields = readTerminalQuery(params);
  return { ...fields, clientId: fields.clientId ?? madeUpClientId(), generatedClientId: fields.clientId === null };
}

/**
 * The client ID a connection of `principal` gets in a session: the one it asked for, unless another
 * principal attached with it first; then one made up, as for a malformed `client=`.
 */
export function bindClientId(query: TerminalQuery, lease: Pick<ControllerLease, "bindClientId">, principal: Principal): string {
  return lease.bindClientId(query.clientId, `${principal.kind}:${principal.id}`) ? query.clientId : madeUpClientId();
}

function madeUpClientId(): string {
  return `srv-${randomBytes(12).toString("base64url")}`;
}
