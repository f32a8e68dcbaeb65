import { randomBytes } from "node:crypto";
import { existsSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute } from "node:path";
import { isValidGrid, MAX_GRID_CELLS } from "../contract/protocol.ts";
import type { CreateSessionRequest, HybridInfo, SessionInfo } from "../contract/types.ts";
import type { PtySpawnOptions, SpawnPty } from "../pty/pty.ts";
import { Emitter } from "./emitter.ts";
import { scheduleMemoryRelease } from "./memory-release.ts";
import { Session, type AdoptedState } from "./session.ts";

/**
 * Sessions one server holds by default (running or exited, hybrid included): far more than a person
 * drives at once, while each holds a PTY, a screen and up to --buffer-bytes of ring, so that 100
 * of them at the largest grid stay within a small machine's memory.
 */
export const DEFAULT_MAX_SESSIONS = 100;
/** A terminal size nobody asked for: the classic 80×24. */
export const DEFAULT_COLS = 80;
export const DEFAULT_ROWS = 24;
/** A session id: 8 characters of [a-z0-9]. */
const ID_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";
/** Environment variables of the server that a child must never see (they carry credentials). */
const PRIVATE_ENV = /^WEBMUX_(TOKEN|.*SECRET.*)$/;

/** What a create body asks for (docs/protocol.md § HTTP API), plus what only the server adds. */
export type CreateSessionOptions = CreateSessionRequest & {
  /**
   * A hybrid session (docs/hybrid.md): the agent side that `info()` shows. Its program is not started
   * here; the hybrid layer starts each terminal run itself, with that run's command.
   */
  hybrid?: () => HybridInfo;
};

export type RegistryOptions = {
  shell: string;
  bufferBytes: number;
  spawnPty: SpawnPty;
  /**
   * Rewrites what a session's PTY really starts, at every (re)start, while the session keeps
   * showing the command it was asked for (shell integration injects its rc files here).
   */
  prepareSpawn?: (sessionId: string, spawn: PtySpawnOptions) => PtySpawnOptions;
  /** Base environment of every child (normally process.env). */
  baseEnv?: NodeJS.ProcessEnv;
  /** sessions held at once (default DEFAULT_MAX_SESSIONS) */
  maxSessions?: number;
  /** Awaited before each create (a session host that died is replaced here). */
  beforeCreate?: () => Promise<void>;
};

export type RegistryEvents = {
  /**
   * The session is in the registry, before any of its output: whoever must see every byte (the
   * Agent API's command tracker) subscribes here. Its program may still be starting in the session
   * host, whose first output can arrive in the same read as the pid.
   */
  added: [session: Session];
  /** The session is announced: its program runs and its pid is known. */
  created: [session: Session];
  /** `previewOnly` when nothing but the preview lines changed. */
  updated: [session: Session, previewOnly: boolean];
  /** A delete began: the session is out of the list and its program is being ended. */
  removing: [id: string];
  removed: [id: string];
  /** A person typed into a session (Session's `input`). */
  input: [session: Session];
};

export class SessionNotFound extends Error {}
export class InvalidSessionRequest extends Error {}
/** The server holds its maximum number of sessions already. */
export class SessionLimitReached extends Error {}

function randomId(length: number): string {
  const bytes = randomBytes(length);
  let out = "";
  for (const b of bytes) out += ID_ALPHABET[b % ID_ALPHABET.length];
  return out;
}

/** All sessions of this server run. */
export class SessionRegistry {
  /** Identifies this server run, so generations never repeat across restarts. */
  readonly bootId = `${Date.now().toString(36)}${randomId(4)}`;
  readonly events = new Emitter<RegistryEvents>();
  private readonly sessions = new Map<string, Session>();
  private generationCounter = 0;

  constructor(private readonly options: RegistryOptions) {}

  nextGeneration = (): string => `${this.bootId}.${++this.generationCounter}`;

  get maxSessions(): number {
    return this.options.maxSessions ?? DEFAULT_MAX_SESSIONS;
  }

  /** Resolves once a session can be created (see RegistryOptions.beforeCreate); create itself stays synchronous. */
  async ready(): Promise<void> {
    await this.options.beforeCreate?.();
  }

  create(request: CreateSessionOptions = {}): Session {
    if (this.sessions.size >= this.maxSessions) {
      throw new SessionLimitReached(`this server already holds ${this.sessions.size} sessions, its limit (--max-sessions); delete some first`);
    }
    const cols = request.cols ?? DEFAULT_COLS;
    const rows = request.rows ?? DEFAULT_ROWS;
    if (!isValidGrid(cols, rows)) throw new InvalidSessionRequest(`a grid of ${cols}×${rows} is over ${MAX_GRID_CELLS} cells (columns × rows)`);
    const command = request.command && request.command.length > 0 ? request.command : [this.options.shell, "-l"];
    const cwd = request.cwd ?? homedir();
    if (!isAbsolute(cwd)) throw new InvalidSessionRequest(`cwd must be an absolute path: ${cwd}`);
    if (!existsSync(cwd) || !statSync(cwd).isDirectory()) throw new InvalidSessionRequest(`cwd is not a directory: ${cwd}`);
    let id: string;
    do id = randomId(8);
    while (this.sessions.has(id));
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(this.options.baseEnv ?? process.env)) {
      if (v !== undefined && !PRIVATE_ENV.test(k)) env[k] = v;
    }
    Object.assign(env, request.env ?? {});
    env.TERM = "xterm-256color";
    env.COLORTERM = env.COLORTERM || "truecolor";
    env.WEBMUX_SESSION = id;
    const session = new Session({
      id,
      command,
      cwd,
      env,
      cols,
      rows,
      title: request.title,
      bufferBytes: this.options.bufferBytes,
      spawnPty: this.spawnFor(id),
      nextGeneration: this.nextGeneration,
      hybrid: request.hybrid,
    });
    let announced = false;
    session.events.on("changed", (previewOnly) => {
      if (announced) this.events.emit("updated", session, previewOnly);
    });
    session.events.on("input", () => this.events.emit("input", session));
    if (!request.hybrid) {
      try {
        session.start();
      } catch (err) {
        void session.dispose();
        throw new InvalidSessionRequest(`cannot start ${command[0]}: ${(err as Error).message}`);
      }
    }
    this.sessions.set(id, session);
    this.events.emit("added", session);
    const announce = () => {
      if (announced || this.sessions.get(id) !== session) return;
      announced = true;
      this.events.emit("created", session);
    };
    // A program starting in the session host is announced once its pid is known, as a local one is at once.
    const starting = session.starting;
    if (starting) starting.then(announce, announce);
    else announce();
    return session;
  }

  /**
   * Take over a session the session host kept while the server restarted (docs/design.md, What
   * survives a restart): same id, generation and ring offsets. The session limit does not apply:
   * nothing is started.
   */
  adopt(state: { id: string; command: string[]; cwd: string; env: Record<string, string>; cols: number; rows: number; title: string | null; adopt: AdoptedState; hybrid?: () => HybridInfo }): Session {
    if (this.sessions.has(state.id)) throw new InvalidSessionRequest(`session ${state.id} exists`);
    const session = new Session({
      id: state.id,
      command: state.command,
      cwd: state.cwd,
      env: state.env,
      cols: state.cols,
      rows: state.rows,
      title: state.title ?? undefined,
      bufferBytes: this.options.bufferBytes,
      spawnPty: this.spawnFor(state.id),
      nextGeneration: this.nextGeneration,
      adopt: state.adopt,
      hybrid: state.hybrid,
    });
    session.events.on("changed", (previewOnly) => this.events.emit("updated", session, previewOnly));
    session.events.on("input", () => this.events.emit("input", session));
    this.sessions.set(state.id, session);
    this.events.emit("added", session);
    this.events.emit("created", session);
    return session;
  }

  /** The server exits and its sessions keep running in the session host: drop the mirrors only. */
  releaseAll(): void {
    const all = this.list();
    this.sessions.clear();
    for (const s of all) s.release();
  }

  private spawnFor(id: string): SpawnPty {
    const { spawnPty, prepareSpawn } = this.options;
    return prepareSpawn ? (spawn) => spawnPty(prepareSpawn(id, spawn)) : spawnPty;
  }

  get(id: string): Session | undefined {
    return this.sessions.get(id);
  }

  require(id: string): Session {
    const session = this.sessions.get(id);
    if (!session) throw new SessionNotFound(`no session ${id}`);
    return session;
  }

  list(): Session[] {
    return [...this.sessions.values()];
  }

  infos(): SessionInfo[] {
    return this.list().map((s) => s.info());
  }

  /** End the program (SIGHUP, then SIGKILL) and forget the session. */
  async remove(id: string): Promise<void> {
    const session = this.require(id);
    this.sessions.delete(id);
    // Viewers hear "deleted" now, not the hang-up's exit status a moment later.
    this.events.emit("removing", id);
    await session.dispose();
    this.events.emit("removed", id);
    scheduleMemoryRelease();
  }

  /** Server shutdown: end every program. */
  async closeAll(): Promise<void> {
    const all = this.list();
    this.sessions.clear();
    await Promise.all(all.map((s) => s.dispose()));
  }
}
