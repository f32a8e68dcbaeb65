import { MAX_COLS, MAX_ROWS, MIN_COLS, MIN_ROWS } from "../contract/protocol.ts";
import { ErrorCode, type SessionInfo, type SessionListResponse, type Settings } from "../contract/types.ts";
import { InvalidSessionRequest, SessionLimitReached, SessionNotFound, type CreateSessionOptions, type SessionRegistry } from "../session/registry.ts";
import type { Session } from "../session/session.ts";
import type { SettingsStore } from "../store/settings.ts";
import { endWithDeadline, HANDLED, JsonResponse, type App } from "./app.ts";
import { can } from "./credentials.ts";
import {
  expectObject,
  optionalBoolean,
  optionalInt,
  optionalString,
  optionalStringArray,
  optionalStringRecord,
  readJson,
  refuseUnknownFields,
  requiredString,
} from "./body.ts";
import { ApiError, invalid } from "./errors.ts";
import { PtySpawnError } from "../pty/pty.ts";
import type { RouteContext } from "./app.ts";

/** Titles are for a list: longer ones are refused rather than cut silently. */
export const MAX_TITLE_CHARS = 200;
/** The fields of a create body (docs/protocol.md § HTTP API, plus `hybrid` from docs/hybrid.md § Creating one). */
const CREATE_FIELDS = ["command", "cwd", "env", "cols", "rows", "title", "hybrid"] as const;
/** The one field of a rename body. */
const RENAME_FIELDS = ["title"] as const;

function findSession(registry: SessionRegistry, id: string): Session {
  try {
    return registry.require(id);
  } catch (err) {
    if (err instanceof SessionNotFound) throw new ApiError(ErrorCode.NOT_FOUND, `no session ${id}`);
    throw err;
  }
}

function requireWrite(ctx: RouteContext): void {
  if (!can(ctx.auth.principal, "terminal:write")) throw new ApiError(ErrorCode.CAPABILITY_DENIED, "this token may not change sessions");
}
function requireRead(ctx: RouteContext): void {
  if (!can(ctx.auth.principal, "terminal:read")) throw new ApiError(ErrorCode.CAPABILITY_DENIED, "this token may not read sessions");
}
function requireGlobal(ctx: RouteContext): void {
  if (ctx.auth.principal.kind !== "global") throw new ApiError(ErrorCode.CAPABILITY_DENIED, "only the global token may do this");
}

/**
 * Creates a hybrid session (docs/hybrid.md § Creating one) from the create body's `hybrid` field, which it validates;
 * throws InvalidSessionRequest for a request it cannot serve.
 */
export type HybridSessionCreator = (hybrid: unknown, request: Omit<CreateSessionOptions, "command" | "hybrid">) => Promise<Session>;

/** The session and settings routes of docs/protocol.md § HTTP API. */
export function registerSessionRoutes(app: App, registry: SessionRegistry, settings: SettingsStore, createHybrid?: HybridSessionCreator): void {
  app.route("GET", "/api/sessions", (ctx): SessionListResponse => {
    requireRead(ctx);
    return { sessions: registry.infos() };
  });

  app.route("POST", "/api/sessions", async (ctx) => {
    requireWrite(ctx);
    const body = expectObject(await readJson(ctx.req));
    refuseUnknownFields(body, CREATE_FIELDS);
    const command = optionalStringArray(body, "command");
    const cwd = optionalString(body, "cwd");
    const env = optionalStringRecord(body, "env");
    const cols = optionalInt(body, "cols", MIN_COLS, MAX_COLS);
    const rows = optionalInt(body, "rows", MIN_ROWS, MAX_ROWS);
    const title = optionalString(body, "title", MAX_TITLE_CHARS);
    if (command && command.length > 0 && command[0] === "") throw invalid("command[0] must name a program");
    const hybrid = body.hybrid ?? undefined;
    if (hybrid !== undefined && !createHybrid) throw invalid("hybrid sessions are not available on this server");
    if (hybrid !== undefined && command) throw invalid("a hybrid session runs its agent: leave out command");
    try {
      await registry.ready();
      const session = hybrid !== undefined ? await createHybrid!(hybrid, { cwd, env, cols, rows, title }) : registry.create({ command, cwd, env, cols, rows, title });
      // In the session host the program starts a moment later; its pid is in the answer.
      await session.whenStarted().catch(() => {});
      return new JsonResponse(201, session.info(), { location: `/api/sessions/${session.id}` });
    } catch (err) {
      if (err instanceof InvalidSessionRequest) throw invalid(err.message);
      if (err instanceof SessionLimitReached) throw new ApiError(ErrorCode.RATE_LIMITED, err.message);
      throw err;
    }
  });

  app.route("GET", "/api/sessions/:id", (ctx): SessionInfo => {
    requireRead(ctx);
    return findSession(registry, ctx.params.id!).info();
  });

  app.route("PATCH", "/api/sessions/:id", async (ctx) => {
    requireWrite(ctx);
    const session = findSession(registry, ctx.params.id!);
    const body = expectObject(await readJson(ctx.req));
    refuseUnknownFields(body, RENAME_FIELDS);
    const title = requiredString(body, "title", MAX_TITLE_CHARS);
    session.setTitle(title);
    return session.info();
  });

  // One restart at a time per session: a second one while the first is ending the program would
  // start it twice (docs/protocol.md § HTTP API).
  const restarting = new Set<string>();
  app.route("POST", "/api/sessions/:id/restart", async (ctx) => {
    requireWrite(ctx);
    const session = findSession(registry, ctx.params.id!);
    if (session.info().hybrid) throw new ApiError(ErrorCode.CONFLICT, "a hybrid session starts its agent by moving: POST /api/sessions/{id}/move");
    if (restarting.has(session.id)) throw new ApiError(ErrorCode.CONFLICT, `session ${session.id} is already restarting`);
    restarting.add(session.id);
    try {
      await session.restart();
    } catch (err) {
      // The program could not start again (its cwd vanished, its command was removed): the
      // session stays exited and says why, instead of an internal error.
      if (err instanceof PtySpawnError) throw invalid(`cannot restart session ${session.id}: ${err.message}`);
      throw err;
    } finally {
      restarting.delete(session.id);
    }
    return session.info();
  });

  app.route("DELETE", "/api/sessions/:id", async (ctx) => {
    requireWrite(ctx);
    findSession(registry, ctx.params.id!);
    await registry.remove(ctx.params.id!);
    ctx.res.writeHead(204, { "cache-control": "no-store" });
    ctx.res.end();
    return HANDLED;
  });

  app.route("GET", "/api/sessions/:id/buffer", (ctx) => {
    requireRead(ctx);
    const session = findSession(registry, ctx.params.id!);
    const { start, end, truncated } = session.stats();
    const bytes = session.readOutput(start, end);
    ctx.res.writeHead(200, {
      "content-type": "application/octet-stream",
      "content-length": bytes.byteLength,
      "cache-control": "no-store",
      "x-webmux-generation": session.generation,
      "x-webmux-start": String(start),
      "x-webmux-end": String(end),
      "x-webmux-truncated": String(truncated),
    });
    endWithDeadline(ctx.res, bytes, app.limits);
    return HANDLED;
  });

  app.route("GET", "/api/settings", (ctx): Settings => {
    requireRead(ctx);
    return settings.get();
  });

  app.route("PUT", "/api/settings", async (ctx): Promise<Settings> => {
    requireGlobal(ctx);
    const body = expectObject(await readJson(ctx.req));
    const change: { open_api?: { enabled?: boolean } } = {};
    for (const key of Object.keys(body)) {
      if (key !== "open_api") throw invalid(`unknown setting: ${key}`);
    }
    if (body.open_api !== undefined) {
      const openApi = expectObject(body.open_api, "open_api");
      for (const key of Object.keys(openApi)) if (key !== "enabled") throw invalid(`unknown setting: open_api.${key}`);
      change.open_api = { enabled: optionalBoolean(openApi, "enabled") };
    }
    try {
      return settings.update(change);
    } catch (err) {
      throw new ApiError(ErrorCode.INTERNAL_ERROR, `cannot save settings: ${(err as Error).message}`);
    }
  });
}
