/**
 * All hybrid sessions of this server: creates them (a webmux Session for the id and the terminal
 * runs, a HybridSession for the conversation, a ChatRoom for its chat clients), routes hooks and
 * chat sockets to them, refuses terminal attaches that must close with 4409, and ends them with
 * their Session.
 */
import { randomBytes } from "node:crypto";
import { homedir } from "node:os";
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { WebSocket } from "ws";
import { CloseCode, isValidSessionId, parseOffset } from "../contract/protocol.ts";
import type { HybridEnd, HybridInfo, HybridState } from "../contract/types.ts";
import { can, secretsEqual, type Principal } from "../http/credentials.ts";
import type { TerminalHub } from "../hub/terminal-hub.ts";
import { bindClientId, parseTerminalQuery } from "../hub/terminal-query.ts";
import { InvalidSessionRequest, type SessionRegistry } from "../session/registry.ts";
import type { Session } from "../session/session.ts";
import { CONVERSATION_ID_PATTERN, type AgentAdapter } from "./adapters/adapter.ts";
import { defaultAdapters } from "./adapters/index.ts";
import { ChatConnection } from "./chat-connection.ts";
import { ChatRoom } from "./chat-room.ts";
import { HybridSession, type SavedHybrid } from "./hybrid-session.ts";

/** The program agent hooks run to report to webmux (posts the hook's stdin JSON with the session's secret). */
export const HOOK_RELAY = fileURLToPath(new URL("./hook-relay.mjs", import.meta.url));
/** Environment variables the relay reads: where to post, and the session's hook secret. */
export const HOOK_URL_VARIABLE = "WEBMUX_HYBRID_URL";
/**
 * Where the relay reads the server's address first, when set: a file the server rewrites at each
 * start, so a TUI that outlived its server (the session host) reaches the next one on another port.
 */
export const HOOK_URL_FILE_VARIABLE = "WEBMUX_HYBRID_URL_FILE";
export const HOOK_SECRET_VARIABLE = "WEBMUX_HYBRID_SECRET";
/** Bytes of randomness in a hook secret. */
const SECRET_BYTES = 32;

export type CreateHybridRequest = {
  agent: string;
  conversationId?: string;
  /** where the conversation starts (default: the terminal) */
  end?: HybridEnd;
  cwd?: string;
  env?: Record<string, string>;
  cols?: number;
  rows?: number;
  title?: string;
};

export type HybridManagerOptions = {
  registry: SessionRegistry;
  terminals: TerminalHub;
  /** generated per-session files (hook settings) live under `<dataDir>/hybrid` */
  dataDir: string;
  adapters?: ReadonlyMap<string, AgentAdapter>;
  chatIdleCloseMs?: number;
  /** The file hooks read the server's address from (sessions in the session host, which outlive this server). */
  hookUrlFile?: string;
  /** Keep a session's record in the session host (docs/design.md, What survives a restart); called whenever it changes. */
  keep?: (session: Session, record: HybridRecord) => void;
};

type Entry = { hybrid: HybridSession; room: ChatRoom; secret: string; kept: string };

/**
 * What the session host keeps of a hybrid session for the next server: the conversation and its
 * end, and what this server made for it (hook secret, settings directory, the generation a
 * session without a run yet has).
 */
export type HybridRecord = SavedHybrid & { agent: string; cwd: string; settingsDir: string; secret: string; generation: string };

const HYBRID_STATES: readonly HybridState[] = ["starting", "idle", "busy", "awaiting_permission", "moving", "parked"];

/** A record the host gave back, checked field by field; null when it is not one. */
export function readHybridRecord(value: unknown): HybridRecord | null {
  if (typeof value !== "object" || value === null) return null;
  const r = value as Record<string, unknown>;
  const str = (v: unknown): v is string => typeof v === "string";
  if (!str(r.agent) || !str(r.cwd) || !str(r.settingsDir) || !str(r.secret) || !str(r.generation) || !str(r.conversationId)) return null;
  if (r.end !== "terminal" && r.end !== "chat") return null;
  if (!HYBRID_STATES.includes(r.state as HybridState)) return null;
  if (!Array.isArray(r.previousConversationIds) || !r.previousConversationIds.every(str)) return null;
  if (typeof r.existing !== "boolean" || (r.chatPid !== null && !Number.isInteger(r.chatPid)) || (r.error !== undefined && !str(r.error))) return null;
  return {
    agent: r.agent,
    cwd: r.cwd,
    settingsDir: r.settingsDir,
    secret: r.secret,
    generation: r.generation,
    conversationId: r.conversationId,
    previousConversationIds: [...r.previousConversationIds],
    existing: r.existing,
    end: r.end,
    state: r.state as HybridState,
    ...(r.error !== undefined ? { error: r.error as string } : {}),
    chatPid: r.chatPid as number | null,
  };
}

/** Until a restored session's HybridSession exists, what its SessionInfo shows (the record's view). */
export function savedInfo(record: HybridRecord): HybridInfo {
  return { agent: record.agent, conversationId: record.conversationId, previousConversationIds: [...record.previousConversationIds], end: record.end, state: record.state };
}

/** The move target is not a hybrid session. */
export class NotHybridError extends Error {}

export class HybridManager {
  private readonly entries = new Map<string, Entry>();
  private readonly adapters: ReadonlyMap<string, AgentAdapter>;
  private hookUrl = "";

  constructor(private readonly options: HybridManagerOptions) {
    this.adapters = options.adapters ?? defaultAdapters();
    options.terminals.setAttachGate((id) => this.entries.get(id)?.hybrid.terminalRefusal() ?? null);
    options.registry.events.on("removing", (id) => this.entries.get(id)?.room.closeAll(CloseCode.NOT_FOUND, "session deleted"));
    options.registry.events.on("removed", (id) => void this.forget(id));
    if (options.keep) options.registry.events.on("updated", (session, previewOnly) => !previewOnly && this.keepRecord(session));
  }

  /** Send the session's record to the session host when it changed since last sent. */
  private keepRecord(session: Session): void {
    const entry = this.entries.get(session.id);
    if (!entry || !this.options.keep) return;
    const record = this.recordOf(session, entry);
    const text = JSON.stringify(record);
    if (text === entry.kept) return;
    entry.kept = text;
    this.options.keep(session, record);
  }

  private recordOf(session: Session, entry: Entry): HybridRecord {
    const { hybrid } = entry;
    return { ...hybrid.saved(), agent: hybrid.agent, cwd: hybrid.cwd, settingsDir: hybrid.settingsDir, secret: entry.secret, generation: session.generation };
  }

  /**
   * Sessions a restarted server took over from the session host, with their records: each is a
   * hybrid session again (docs/design.md, What survives a restart). A record of an agent this
   * server does not know leaves its session a plain one.
   */
  restore(adopted: readonly { session: Session; record: HybridRecord; info: { current: () => HybridInfo } }[]): void {
    for (const { session, record, info } of adopted) {
      const adapter = this.adapters.get(record.agent);
      if (!adapter || this.entries.has(session.id)) continue;
      const hybrid = new HybridSession({
        adapter,
        conversationId: record.conversationId,
        previousConversationIds: record.previousConversationIds,
        existing: record.existing,
        end: record.end,
        cwd: record.cwd,
        settingsDir: record.settingsDir,
        hookRelay: [process.execPath, HOOK_RELAY],
        chatIdleCloseMs: this.options.chatIdleCloseMs,
        isRemoved: () => !this.options.registry.get(session.id),
      });
      info.current = () => hybrid.info();
      const entry = this.add(session, hybrid, record.secret);
      entry.kept = JSON.stringify(record);
      hybrid.resume(session, record);
    }
  }

  private add(session: Session, hybrid: HybridSession, secret: string): Entry {
    const room = new ChatRoom(hybrid, session);
    const entry: Entry = { hybrid, room, secret, kept: "" };
    this.entries.set(session.id, entry);
    hybrid.events.on("leaving", (end) => {
      if (end !== "terminal") return;
      const stream = this.options.terminals.streamOf(session.id);
      stream?.flush();
      stream?.closeAll(CloseCode.MOVED, "session moved: chat");
    });
    return entry;
  }

  /** Where hooks post: the server's own address, over loopback when it listens on every interface. */
  setServerUrl(url: string): void {
    const parsed = new URL(url);
    if (parsed.hostname === "0.0.0.0") parsed.hostname = "127.0.0.1";
    if (parsed.hostname === "[::]") parsed.hostname = "[::1]";
    this.hookUrl = parsed.origin;
    const file = this.options.hookUrlFile;
    if (file) {
      mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, `${this.hookUrl}\n`, { mode: 0o600 });
      renameSync(tmp, file);
    }
  }

  get(id: string): HybridSession | undefined {
    return this.entries.get(id)?.hybrid;
  }

  async create(request: CreateHybridRequest): Promise<Session> {
    const adapter = this.adapters.get(request.agent);
    if (!adapter) throw new InvalidSessionRequest(`unknown agent ${request.agent} (known: ${[...this.adapters.keys()].join(", ")})`);
    if (request.conversationId !== undefined && !CONVERSATION_ID_PATTERN.test(request.conversationId)) {
      throw new InvalidSessionRequest("conversationId must be 1–128 characters of [A-Za-z0-9_-]");
    }
    const cwd = request.cwd ?? homedir();
    const probeEnv: Record<string, string> = {};
    for (const [k, v] of Object.entries({ ...process.env, ...request.env })) if (v !== undefined) probeEnv[k] = v;
    try {
      adapter.checkInstalled({ cwd, env: probeEnv });
    } catch (err) {
      throw new InvalidSessionRequest((err as Error).message);
    }
    if (request.conversationId !== undefined) {
      // Offer only what will resume here: the agent's own checks would fail later, less clearly.
      const problem =
        adapter.conversationIdProblem?.(request.conversationId) ??
        (await adapter.resumeProblem?.({ cwd, env: probeEnv, conversationId: request.conversationId })) ??
        null;
      if (problem !== null) throw new InvalidSessionRequest(problem);
    }
    const secret = randomBytes(SECRET_BYTES).toString("base64url");
    const settingsDir = join(this.options.dataDir, "hybrid", randomBytes(8).toString("hex"));
    let sessionId = "";
    const hybrid = new HybridSession({
      adapter,
      conversationId: request.conversationId ?? adapter.newConversationId() ?? "",
      existing: request.conversationId !== undefined,
      end: request.end ?? "terminal",
      cwd,
      settingsDir,
      hookRelay: [process.execPath, HOOK_RELAY],
      chatIdleCloseMs: this.options.chatIdleCloseMs,
      isRemoved: () => !this.options.registry.get(sessionId),
    });
    const session = this.options.registry.create({
      command: adapter.displayCommand(),
      cwd,
      env: {
        ...request.env,
        [HOOK_URL_VARIABLE]: this.hookUrl,
        [HOOK_SECRET_VARIABLE]: secret,
        ...(this.options.hookUrlFile ? { [HOOK_URL_FILE_VARIABLE]: this.options.hookUrlFile } : {}),
      },
      cols: request.cols,
      rows: request.rows,
      title: request.title,
      hybrid: () => hybrid.info(),
    });
    sessionId = session.id;
    this.add(session, hybrid, secret);
    await hybrid.open(session);
    this.keepRecord(session);
    return session;
  }

  /** Throws NotHybridError, or HybridBusyError while busy without `interrupt`. */
  async move(id: string, to: HybridEnd, interrupt: boolean): Promise<void> {
    const entry = this.entries.get(id);
    if (!entry) throw new NotHybridError(`session ${id} is not a hybrid session`);
    await entry.hybrid.move(to, interrupt);
  }

  /** The session a hook is for, when `secret` is its hook secret (compared in constant time); else null. */
  hookTarget(id: string, secret: string): HybridSession | null {
    const entry = isValidSessionId(id) ? this.entries.get(id) : undefined;
    // Compared even for unknown ids, so timing tells nothing about which ids exist.
    const ok = secretsEqual(secret, entry?.secret ?? "") && entry !== undefined;
    return ok ? entry.hybrid : null;
  }

  /** A `/ws/s/{id}/chat` socket, already upgraded and authenticated. */
  attachChat(ws: WebSocket, id: string, params: URLSearchParams, principal: Principal): void {
    const entry = isValidSessionId(id) ? this.entries.get(id) : undefined;
    if (!entry) {
      ws.close(CloseCode.NOT_FOUND, this.options.registry.get(id) ? "not a hybrid session" : "session not found");
      return;
    }
    const query = parseTerminalQuery(params);
    const since = parseOffset(params.get("since"));
    const clientId = bindClientId(query, this.options.registry.require(id).lease, principal);
    const conn = new ChatConnection(ws, clientId, query.label, can(principal, "terminal:write"), (c) => entry.room.detach(c));
    ws.on("message", (data, isBinary) => {
      if (isBinary) return; // the chat protocol is JSON text
      const text = Array.isArray(data) ? Buffer.concat(data).toString("utf8") : Buffer.isBuffer(data) ? data.toString("utf8") : Buffer.from(data).toString("utf8");
      try {
        entry.room.handleText(conn, text);
      } catch (err) {
        // A bug handling one frame must not take the server or the session down.
        console.error("webmux: chat frame failed:", err);
        conn.close(CloseCode.INTERNAL, "internal error");
      }
    });
    void entry.room.attach(conn, since).catch((err) => {
      console.error("webmux: chat attach failed:", err);
      conn.close(CloseCode.INTERNAL, "internal error");
    });
  }

  private async forget(id: string): Promise<void> {
    const entry = this.entries.get(id);
    if (!entry) return;
    this.entries.delete(id);
    entry.room.closeAll(CloseCode.NOT_FOUND, "session removed");
    entry.room.dispose();
    await entry.hybrid.dispose();
  }

  /**
   * Server shutdown: stop every chat end's agent (terminal runs end with their Sessions). With
   * `release`, the sessions live on in the session host: their generated files stay for their TUIs.
   */
  async close(release = false): Promise<void> {
    const all = [...this.entries.values()];
    this.entries.clear();
    await Promise.all(
      all.map(async ({ room, hybrid }) => {
        room.closeAll(1001, "server shutting down");
        room.dispose();
        await (release ? hybrid.release() : hybrid.dispose());
      }),
    );
  }
}
