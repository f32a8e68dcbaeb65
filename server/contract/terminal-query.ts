/**
 * The query of /ws/s/{id} (docs/protocol.md § Query parameters): the one encoder every client
 * uses (browser, `webmux attach`, the test and bench clients) beside the one reader the server
 * uses, so both ends name and spell each parameter alike. Pure: no node:, Bun or DOM.
 */
import { isValidClientId, isValidGeneration, parseOffset, sanitizeLabel } from "./protocol.ts";

/**
 * docs/protocol.md § Query parameters: `replayAck=1` says the client sends 0x07 after it has
 * parsed each replay, so the server can ignore its 0x06 until then.
 */
export const REPLAY_ACK_PARAM = "replayAck";

/** What a client asks of /ws/s/{id}; an absent field leaves its parameter out. */
export type TerminalQueryRequest = {
  /** the tab's or process's client ID (`client=`) */
  client?: string;
  /** the device label (`label=`); an empty one is left out */
  label?: string;
  /** the resume point (`generation=` and `offset=`) */
  resume?: { generation: string; offset: number } | null;
  /** false: `history=0`, the literal modes-only snapshot after truncation */
  history?: boolean;
  /** `compress=1`: the client wants permessage-deflate (docs/protocol.md § Compression) */
  compress?: boolean;
  /** `replayAck=1`: the client sends 0x07 once it has parsed each replay */
  replayAck?: boolean;
};

/** The query string (without `?`), parameters in a fixed order, each value URI-encoded. */
export function encodeTerminalQuery(request: TerminalQueryRequest): string {
  const pairs: [string, string][] = [];
  if (request.client !== undefined) pairs.push(["client", request.client]);
  if (request.label) pairs.push(["label", request.label]);
  if (request.resume) pairs.push(["generation", request.resume.generation], ["offset", String(request.resume.offset)]);
  if (request.history === false) pairs.push(["history", "0"]);
  if (request.compress) pairs.push(["compress", "1"]);
  if (request.replayAck) pairs.push([REPLAY_ACK_PARAM, "1"]);
  return pairs.map(([name, value]) => `${name}=${encodeURIComponent(value)}`).join("&");
}

/** The path and query of a session's terminal stream: `/ws/s/{id}?…`. */
export function terminalStreamPath(sessionId: string, request: TerminalQueryRequest): string {
  const query = encodeTerminalQuery(request);
  return `/ws/s/${encodeURIComponent(sessionId)}${query ? `?${query}` : ""}`;
}

/** The query as the server reads it: a malformed parameter is ignored, never an error. */
export type TerminalQueryFields = {
  /** null when absent or malformed (the server then makes one up) */
  clientId: string | null;
  label: string;
  /** the resume point, only when both halves are valid */
  resume: { generation: string; offset: number } | null;
  /** `history=0`: the literal modes-only snapshot after truncation */
  history: boolean;
  /** `replayAck=1`: the client sends 0x07 once it has parsed each replay */
  replayAck: boolean;
};

/** Reads a parsed query (URLSearchParams, or anything that answers `get`). */
export function readTerminalQuery(params: { get(name: string): string | null }): TerminalQueryFields {
  const rawClient = params.get("client");
  const generation = params.get("generation");
  const offset = parseOffset(params.get("offset"));
  return {
    clientId: isValidClientId(rawClient) ? rawClient : null,
    label: sanitizeLabel(params.get("label")),
    resume: isValidGeneration(generation) && offset !== null ? { generation, offset } : null,
    history: params.get("history") !== "0",
    replayAck: params.get(REPLAY_ACK_PARAM) === "1",
  };
}
