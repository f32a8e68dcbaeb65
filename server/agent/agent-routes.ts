/** The Agent API over HTTP: run, send, read, and token management. */
import { bracketPasteText } from "../contract/bracketed-paste.ts";
import { CAPABILITIES, ErrorCode, type AgentReadResponse, type AgentRunResult, type AgentSendResponse, type Capability, type CreateTokenResponse, type TokenInfo } from "../contract/types.ts";
import { HANDLED, JsonResponse, type App, type RouteContext } from "../http/app.ts";
import { expectObject, optionalBoolean, optionalInt, readJson, requiredString } from "../http/body.ts";
import { can } from "../http/credentials.ts";
import { ApiError, invalid } from "../http/errors.ts";
import { MAX_READ_SCROLLBACK_LINES } from "../session/headless-screen.ts";
import type { AgentApi } from "./agent-api.ts";
import { optionalPaneId, parseRunRequest, requiredCommand } from "./run-request.ts";
import { MAX_TOKEN_LIFETIME_S, MAX_TOKEN_NAME_CHARS, TokenStoreError } from "./tokens.ts";


function requireCapability(ctx: RouteContext, capability: Capability): void {
  if (!can(ctx.auth.principal, capability)) throw new ApiError(ErrorCode.CAPABILITY_DENIED, `this token lacks ${capability}`);
}

function requireGlobal(ctx: RouteContext): void {
  if (ctx.auth.principal.kind !== "global") throw new ApiError(ErrorCode.CAPABILITY_DENIED, "only the global token manages tokens");
}

/** `?name=true|false|1|0`, absent = undefined; anything else is a 400. */
function queryBoolean(url: URL, name: string): boolean | undefined {
  const raw = url.searchParams.get(name);
  if (raw === null) return undefined;
  if (raw === "true" || raw === "1") return true;
  if (raw === "false" || raw === "0") return false;
  throw invalid(`${name} must be true or false`);
}

function queryInt(url: URL, name: string, min: number, max: number): number | undefined {
  const raw = url.searchParams.get(name);
  if (raw === null) return undefined;
  if (!/^\d{1,9}$/.test(raw) || Number(raw) < min || Number(raw) > max) throw invalid(`${name} must be a whole number from ${min} to ${max}`);
  return Number(raw);
}

export function registerAgentRoutes(app: App, api: AgentApi): void {
  app.route("POST", "/api/agent/run", async (ctx): Promise<AgentRunResult> => {
    api.requireEnabled();
    requireCapability(ctx, "terminal:write");
    const { request, paneId } = parseRunRequest(await readJson(ctx.req));
    const session = api.resolvePane(paneId, true);
    // A caller that goes away gives its slot back at once (res "close" before the answer was written).
    const gone = new AbortController();
    const onClose = () => {
      if (!ctx.res.writableFinished) gone.abort();
    };
    ctx.res.on("close", onClose);
    try {
      return await api.run(ctx.auth.principal, session, request, gone.signal);
    } finally {
      ctx.res.off("close", onClose);
    }
  });

  app.route("POST", "/api/agent/send", async (ctx): Promise<AgentSendResponse> => {
    api.requireEnabled();
    requireCapability(ctx, "terminal:write");
    const body = expectObject(await readJson(ctx.req));
    const command = requiredCommand(body);
    const enter = optionalBoolean(body, "enter") ?? true;
    const session = api.resolvePane(optionalPaneId(body), true);
    // Several lines go in as one paste where the program accepts pastes, so each newline is not an Enter.
    const text = command.includes("\n") && session.modes.bracketedPaste ? bracketPasteText(command) : command;
    if (!session.write(enter ? `${text}\r` : text)) throw new ApiError(ErrorCode.NOT_FOUND, `session ${session.id} has exited`);
    api.active.note(session.id);
    return { ok: true, pane_id: session.id };
  });

  app.route("GET", "/api/agent/read", async (ctx): Promise<AgentReadResponse> => {
    api.requireEnabled();
    requireCapability(ctx, "terminal:read");
    const scrollback = queryInt(ctx.url, "scrollback", 0, MAX_READ_SCROLLBACK_LINES);
    const stripAnsi = queryBoolean(ctx.url, "strip_ansi") ?? true;
    const session = api.resolvePane(ctx.url.searchParams.get("pane_id") ?? undefined, false);
    const screen = await session.readScreen({ scrollback: scrollback ?? 0, styled: !stripAnsi });
    return {
      pane_id: session.id,
      lines: screen.lines,
      ...(scrollback !== undefined ? { scrollback: screen.scrollback } : {}),
      cursor: screen.cursor,
      cwd: session.cwd,
    };
  });

  app.route("POST", "/api/tokens", async (ctx) => {
    requireGlobal(ctx);
    const body = expectObject(await readJson(ctx.req));
    const name = requiredString(body, "name", MAX_TOKEN_NAME_CHARS).trim();
    if (name === "") throw invalid("name is required");
    const capabilities = body.capabilities;
    if (!Array.isArray(capabilities) || capabilities.length === 0 || !capabilities.every((c) => CAPABILITIES.includes(c as Capability))) {
      throw invalid(`capabilities must be a non-empty list of ${CAPABILITIES.join(", ")}`);
    }
    const expiresIn = optionalInt(body, "expires_in", 1, MAX_TOKEN_LIFETIME_S) ?? null;
    try {
      const { token, info } = api.tokens.create(name, capabilities as Capability[], expiresIn);
      const response: CreateTokenResponse = { token, token_info: info };
      return new JsonResponse(201, response);
    } catch (err) {
      if (err instanceof TokenStoreError) throw invalid(err.message);
      throw new ApiError(ErrorCode.INTERNAL_ERROR, `cannot save the token: ${(err as Error).message}`);
    }
  });

  app.route("GET", "/api/tokens", (ctx): { tokens: TokenInfo[] } => {
    requireGlobal(ctx);
    return { tokens: api.tokens.list() };
  });

  app.route("DELETE", "/api/tokens/:id", (ctx) => {
    requireGlobal(ctx);
    let removed: boolean;
    try {
      removed = api.tokens.revoke(ctx.params.id!);
    } catch (err) {
      throw new ApiError(ErrorCode.INTERNAL_ERROR, `cannot save the token list: ${(err as Error).message}`);
    }
    if (!removed) throw new ApiError(ErrorCode.NOT_FOUND, `no token ${ctx.params.id}`);
    ctx.res.writeHead(204, { "cache-control": "no-store" });
    ctx.res.end();
    return HANDLED;
  });
}
