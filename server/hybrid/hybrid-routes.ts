/**
 * HTTP and WebSocket entry points of hybrid sessions: `POST /api/sessions/{id}/move`,
 * `/ws/s/{id}/chat`, the `hybrid` field of `POST /api/sessions`, and the internal hook route
 * `POST /api/hybrid/{id}/hook`, which the agent's hook relay calls with the session's own secret
 * (never the global token) instead of a credential of the app.
 */
import { ErrorCode, type HybridEnd, type SessionInfo } from "../contract/types.ts";
import { HANDLED, refuseUpgrade, type App } from "../http/app.ts";
import { expectObject, optionalBoolean, optionalString, readJson, requiredString, type JsonObject } from "../http/body.ts";
import { can } from "../http/credentials.ts";
import { ApiError, invalid } from "../http/errors.ts";
import type { WebSocketAcceptor } from "../hub/accept.ts";
import type { HybridSessionCreator } from "../http/session-routes.ts";
import type { SessionRegistry } from "../session/registry.ts";
import type { CreateHybridRequest, HybridManager } from "./hybrid-manager.ts";
import { NotHybridError } from "./hybrid-manager.ts";
import { HybridBusyError } from "./hybrid-session.ts";

const HOOK_PATH = "/api/hybrid/:id/hook";
/** Hook payloads carry a prompt at most; anything bigger is not a hook. */
const MAX_HOOK_BODY_BYTES = 1024 * 1024;
/** Agent names and event names are short words. */
const MAX_NAME_CHARS = 64;

function readEnd(obj: JsonObject, key: string): HybridEnd | undefined {
  const value = optionalString(obj, key, MAX_NAME_CHARS);
  if (value === undefined) return undefined;
  if (value !== "terminal" && value !== "chat") throw invalid(`${key} must be "terminal" or "chat"`);
  return value;
}

/** The `hybrid` field of `POST /api/sessions`: `{agent, conversationId?, end?}`. */
export function readHybridField(value: unknown): Pick<CreateHybridRequest, "agent" | "conversationId" | "end"> {
  const hybrid = expectObject(value, "hybrid");
  return {
    agent: requiredString(hybrid, "agent", MAX_NAME_CHARS),
    conversationId: optionalString(hybrid, "conversationId", 128),
    end: readEnd(hybrid, "end"),
  };
}

/** What `POST /api/sessions` calls for a body with `hybrid`. */
export function hybridCreator(manager: HybridManager): HybridSessionCreator {
  return (hybrid, request) => manager.create({ ...readHybridField(hybrid), ...request });
}

export function registerHybridRoutes(app: App, manager: HybridManager, registry: SessionRegistry, acceptor: WebSocketAcceptor): void {
  app.route("POST", "/api/sessions/:id/move", async (ctx): Promise<SessionInfo> => {
    if (!can(ctx.auth.principal, "terminal:write")) throw new ApiError(ErrorCode.CAPABILITY_DENIED, "this token may not change sessions");
    const id = ctx.params.id!;
    const session = registry.get(id);
    if (!session) throw new ApiError(ErrorCode.NOT_FOUND, `no session ${id}`);
    const body = expectObject(await readJson(ctx.req));
    const to = readEnd(body, "to");
    if (!to) throw invalid(`to is required ("terminal" or "chat")`);
    try {
      await manager.move(id, to, optionalBoolean(body, "interrupt") ?? false);
    } catch (err) {
      if (err instanceof HybridBusyError) throw new ApiError(ErrorCode.BUSY, err.message);
      if (err instanceof NotHybridError) throw invalid(err.message);
      throw err;
    }
    return session.info();
  });

  app.websocket("/ws/s/:id/chat", (req, socket, head, { params, url, auth }) => {
    if (!can(auth.principal, "terminal:read")) {
      refuseUpgrade(socket, 403, ErrorCode.CAPABILITY_DENIED, "this token may not read sessions");
      return;
    }
    acceptor.accept(req, socket, head, url, auth.principal, (ws) => manager.attachChat(ws, params.id!, url.searchParams, auth.principal));
  });
}

/**
 * The internal hook route: it carries the session's own secret instead of a credential of the
 * app. A wrong or missing secret gets 401, like any failed credential, and guesses are throttled.
 */
export function registerHookRoute(app: App, manager: HybridManager): void {
  app.publicRoute("POST", HOOK_PATH, async ({ req, res, params }) => {
    const secret = req.headers["x-webmux-hook-secret"];
    // Guesses at hook secrets are throttled like any credential's, counted apart from tokens'.
    const target = app.checkCredential(req, "hook", () => (typeof secret === "string" ? manager.hookTarget(params.id!, secret) : null), "missing or invalid hook secret");
    if (target instanceof ApiError) {
      req.resume();
      throw target;
    }
    const body = expectObject(await readJson(req, MAX_HOOK_BODY_BYTES));
    target.handleHook(requiredString(body, "event", MAX_NAME_CHARS), body.payload);
    res.writeHead(204, { "cache-control": "no-store" });
    res.end();
    return HANDLED;
  });
}
