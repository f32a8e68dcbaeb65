import { mkdirSync, accessSync, constants } from "node:fs";
import { createServer as createHttpServer, type RequestListener, type Server } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { spawnPty } from "./pty/index.ts";
import { AgentApi } from "./agent/agent-api.ts";
import { registerAgentRoutes } from "./agent/agent-routes.ts";
import { registerAgentSocket } from "./agent/agent-socket.ts";
import { integratedShellOf, ShellIntegration } from "./agent/shell-integration.ts";
import type { ResumedShell } from "./agent/command-tracker.ts";
import { PrincipalGate } from "./agent/principal-gate.ts";
import { AgentTokenStore } from "./agent/tokens.ts";
import { answerClientError, App } from "./http/app.ts";
import { Authenticator } from "./http/auth.ts";
import { registerDebugRoutes } from "./debug-routes.ts";
import { registerSessionRoutes } from "./http/session-routes.ts";
import { StaticFiles } from "./http/static.ts";
import { applyHttpTimeouts, DEFAULT_HTTP_LIMITS, HttpConnectionLimiter, TLS_HANDSHAKE_TIMEOUT_MS, type HttpLimits } from "./http/http-limits.ts";
import { loadTlsCredentials, TlsFileError, type TlsFiles } from "./http/tls.ts";
import { WebSocketAcceptor } from "./hub/accept.ts";
import { connectionLimits } from "./hub/connection-limit.ts";
import { TerminalHub } from "./hub/terminal-hub.ts";
import { SessionListStream } from "./hub/session-list.ts";
import { SettingsStream } from "./hub/settings-stream.ts";
import { HybridManager, readHybridRecord, savedInfo, type HybridRecord } from "./hybrid/hybrid-manager.ts";
import type { HybridInfo } from "./contract/types.ts";
import type { Session } from "./session/session.ts";
import { hybridCreator, registerHookRoute, registerHybridRoutes } from "./hybrid/hybrid-routes.ts";
import { SessionRegistry } from "./session/registry.ts";
import { HostBinding, type AdoptedRun } from "./host/host-link.ts";
import { HostGoneError, HostRefusedError, type HandedOver } from "./host/host-client.ts";
import { handOverHost, HostStartError } from "./host/spawn-host.ts";
import { HostDirError } from "./host/host-dir.ts";
import { SPOKEN_HOST_PROTOCOL, WEBMUX_BUILD } from "./host/build.ts";
import { Refusal } from "./host/protocol.ts";
import { isValidSessionId } from "./contract/protocol.ts";
import { loadGlobalToken } from "./store/global-token.ts";
import { removeStaleTempFiles } from "./store/json-file.ts";
import { LoggedOutCookies } from "./store/logged-out-cookies.ts";
import { SettingsStore } from "./store/settings.ts";

/** Where `vite build` puts the client. */
export const CLIENT_DIST = join(dirname(fileURLToPath(import.meta.url)), "..", "dist", "client");

export type WebmuxOptions = {
  host: string;
  port: number;
  token: string | null;
  dataDir: string;
  shell: string;
  bufferBytes: number;
  openApi: boolean | null;
  staticDir?: string;
  /** serve HTTPS and WSS with this certificate and key (`--tls-cert`, `--tls-key`) */
  tls?: TlsFiles | null;
  /** believe a reverse proxy's forwarding headers about scheme and host (`--trust-proxy`) */
  trustProxy?: boolean;
  /** concurrent WebSockets in all (default DEFAULT_MAX_CONNECTIONS) */
  maxConnections?: number;
  /** concurrent WebSockets per client address (default DEFAULT_MAX_CONNECTIONS_PER_ADDRESS) */
  maxConnectionsPerAddress?: number;
  /** sessions held at once (default DEFAULT_MAX_SESSIONS) */
  maxSessions?: number;
  /** HTTP timeouts and connection caps (default DEFAULT_HTTP_LIMITS; tests shorten them) */
  httpLimits?: Partial<HttpLimits>;
  /**
   * Run every session's program in the data dir's session host, so sessions outlive this server
   * (docs/design.md, What survives a restart). `webmux serve` asks for it unless given
   * `--stop-sessions-on-exit`; here the default is this process (what the in-process test servers use).
   */
  sessionHost?: boolean;
  /** With a session host: end every session when the server closes, as without one. */
  stopSessionsOnExit?: boolean;
};

export type Webmux = {
  /** `http://HOST:PORT`, or `https://…` with TLS; no trailing slash */
  url: string;
  host: string;
  port: number;
  token: string;
  tokenGenerated: boolean;
  registry: SessionRegistry;
  settings: SettingsStore;
  acceptor: WebSocketAcceptor;
  terminals: TerminalHub;
  hybrid: HybridManager;
  agent: AgentApi;
  http: Server;
  /** the session host the sessions run in, or null when they run in this process */
  hostLink: import("./host/host-link.ts").HostLink | null;
  /**
   * Stop serving. Sessions end with the server, unless they run in a session host (and
   * `stopSessionsOnExit` is off): then they keep running there for the next server.
   */
  close(): Promise<void>;
  /**
   * The last line of defence after an uncaught exception: no goodbyes to clients, only every
   * session's program ended (SIGHUP, then SIGKILL) so none is left behind as an orphan.
   */
  abort(): Promise<void>;
};

/** A failure a user can act on, reported as one line without a stack. */
export class StartupError extends Error {}

function prepareDataDir(dataDir: string): void {
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    accessSync(dataDir, constants.W_OK | constants.R_OK);
    removeStaleTempFiles(dataDir);
  } catch (err) {
    throw new StartupError(`cannot use data dir ${dataDir}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/** Compose and start the whole server: registry, settings, auth, HTTP routes and WebSockets. */
export async function startWebmux(options: WebmuxOptions): Promise<Webmux> {
  // Certificates first: a wrong path should not leave a generated token or settings behind.
  let tls = null;
  try {
    tls = options.tls ? loadTlsCredentials(options.tls) : null;
  } catch (err) {
    if (err instanceof TlsFileError) throw new StartupError(err.message);
    throw err;
  }
  prepareDataDir(options.dataDir);
  let token: string;
  let tokenGenerated: boolean;
  let settings: SettingsStore;
  let tokens: AgentTokenStore;
  let loggedOut: LoggedOutCookies;
  let integration: ShellIntegration;
  try {
    ({ token, generated: tokenGenerated } = loadGlobalToken(options.dataDir, options.token));
    settings = new SettingsStore(options.dataDir);
    if (options.openApi !== null && settings.get().open_api.enabled !== options.openApi) {
      settings.update({ open_api: { enabled: options.openApi } });
    }
    tokens = new AgentTokenStore(options.dataDir);
    loggedOut = new LoggedOutCookies(options.dataDir);
    integration = new ShellIntegration(join(options.dataDir, "shell-integration"));
  } catch (err) {
    throw new StartupError(`cannot use data dir ${options.dataDir}: ${(err as Error).message}`);
  }

  const host = options.sessionHost
    ? new HostBinding({
        dataDir: options.dataDir,
        bufferBytes: options.bufferBytes,
        log: (line) => process.stderr.write(`${line}\n`),
        // The host is gone (killed): its programs with it. Their sessions are removed, as a delete would.
        onLost: () => {
          for (const session of registry.list()) void registry.remove(session.id).catch(() => {});
        },
      })
    : null;
  let adopted: AdoptedRun[] = [];
  if (host) {
    try {
      adopted = await host.open();
    } catch (err) {
      if (!(err instanceof HostRefusedError && err.reason === Refusal.PROTOCOL)) throw startupErrorOf(err, options.dataDir);
      // Another build's host: it hands its sessions over to a host of this build, or keeps them.
      try {
        const handed = await handOverHost(options.dataDir);
        process.stderr.write(`${handedOverLine(options.dataDir, err, handed)}\n`);
      } catch (handoverErr) {
        if (handoverErr instanceof HostRefusedError || handoverErr instanceof HostGoneError) throw new StartupError(protocolMismatchLine(options.dataDir, err, handoverErr.message));
        throw handoverErr;
      }
      try {
        adopted = await host.open();
      } catch (again) {
        throw startupErrorOf(again, options.dataDir);
      }
    }
  }
  const registry: SessionRegistry = new SessionRegistry({
    shell: options.shell,
    bufferBytes: options.bufferBytes,
    spawnPty: host ? host.spawnPty : spawnPty,
    prepareSpawn: integration.prepareSpawn,
    maxSessions: options.maxSessions,
    beforeCreate: host ? async () => void adoptSessions(registry, integration, await host.ensure()) : undefined,
  });
  const gate = new PrincipalGate(tokens, settings, loggedOut);
  let resumedShells = new Map<string, ResumedShell>();
  let resumedHybrids: AdoptedHybrid[] = [];
  if (host) {
    ({ shells: resumedShells, hybrids: resumedHybrids } = adoptSessions(registry, integration, adopted));
    const titles = new Map<string, string | null>();
    registry.events.on("updated", (session, previewOnly) => {
      if (previewOnly || titles.get(session.id) === session.customTitle) return;
      titles.set(session.id, session.customTitle);
      host.setTitle(session.id, session.customTitle);
    });
    registry.events.on("removed", (id) => {
      titles.delete(id);
      host.forget(id);
    });
  }
  const auth = new Authenticator({
    globalToken: token,
    resolveAgentToken: (t) => tokens.resolve(t),
    lookupAgentPrincipal: (id) => tokens.lookup(id),
    denyPrincipal: (principal) => gate.denial(principal),
    loggedOut,
    trustProxy: options.trustProxy ?? false,
  });
  const httpLimits: HttpLimits = { ...DEFAULT_HTTP_LIMITS, ...options.httpLimits };
  const app = new App(auth, new StaticFiles(options.staticDir ?? CLIENT_DIST, options.trustProxy ?? false), httpLimits);
  const wsLimits = connectionLimits(options);
  const acceptor = new WebSocketAcceptor(undefined, wsLimits);
  // docs/design.md, Authentication and credentials: a credential that stops holding closes its sockets.
  acceptor.watchCredentials(gate);
  const offRevoked = tokens.events.on("revoked", () => acceptor.recheckCredentials());
  const offSettings = settings.events.on("changed", () => acceptor.recheckCredentials());
  const offLoggedOut = loggedOut.events.on("added", () => acceptor.recheckCredentials());
  const terminals = new TerminalHub(registry, acceptor);
  if (host && !tls) {
    // docs/design.md § The session host serves the streams: a plain session's terminal stream goes to
    // the host that owns its program (TLS, hybrid sessions and Bun keep the relay through this process).
    host.serveStreams(acceptor, {
      seat: (id, seat) => registry.get(id)?.setRemoteSeat(seat),
      input: (id) => registry.get(id)?.noteUserInput(),
      grid: (id, cols, rows) => registry.get(id)?.followResize(cols, rows),
      snapshot: async (id, options) => {
        const session = registry.get(id);
        if (!session) throw new Error(`no session ${id}`);
        const state = await session.serializeScreen(options);
        return { state, gaps: session.stats().screen.gaps };
      },
    });
    registry.events.on("removing", (id) => host.closeSessionStreams(id));
    terminals.setHandoff((req, socket, head, url, principal, id) => {
      const session = isValidSessionId(id) ? registry.get(id) : undefined;
      if (!session || session.status !== "running" || session.info().hybrid || terminals.refuses(id)) return false;
      return host.handStream(req, socket, head, url, principal, id);
    });
  }
  const hybrid = new HybridManager({
    registry,
    terminals,
    dataDir: options.dataDir,
    // Only one server at a time serves a host's sessions, so the file names the one that runs now.
    hookUrlFile: host ? join(options.dataDir, "hybrid", "server-url") : undefined,
    keep: host
      ? (session, record) =>
          host.setHybrid(
            { id: session.id, command: session.command, cwd: session.startCwd, env: { ...session.env }, createdAt: session.createdAt, title: session.customTitle, hybrid: true },
            session.cols,
            session.rows,
            record,
          )
      : undefined,
  });
  hybrid.restore(resumedHybrids);
  registerSessionRoutes(app, registry, settings, hybridCreator(hybrid));
  registerHybridRoutes(app, hybrid, registry, acceptor);
  terminals.register(app);
  const sessionList = new SessionListStream(registry, acceptor);
  sessionList.register(app);
  const settingsStream = new SettingsStream(settings, acceptor);
  settingsStream.register(app);
  const agent = new AgentApi({ registry, settings, tokens, integration, resumedShells });
  registerAgentRoutes(app, agent);
  const agentSockets = registerAgentSocket(app, agent, acceptor);

  registerHookRoute(app, hybrid);
  const onRequest: RequestListener = app.handleRequest;
  // The same app either way: HTTPS only wraps the connections, upgrades included (WSS).
  const http: Server = tls ? createHttpsServer({ cert: tls.cert, key: tls.key, handshakeTimeout: TLS_HANDSHAKE_TIMEOUT_MS }, onRequest) : createHttpServer(onRequest);
  applyHttpTimeouts(http, httpLimits);
  const httpConnections = new HttpConnectionLimiter(httpLimits);
  httpConnections.watch(http, tls !== null);
  // Node drops a connection past this at once, TLS handshakes included: every WebSocket and every plain connection.
  http.maxConnections = wsLimits.total + httpLimits.maxConnections;
  registerDebugRoutes(app, { registry, acceptor, terminals, http });
  http.on("upgrade", (req, socket, head) => {
    httpConnections.handOver(socket);
    app.handleUpgrade(req, socket, head);
  });
  http.on("clientError", answerClientError);
  await new Promise<void>((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      if (err.code === "EADDRINUSE") reject(new StartupError(`port ${options.port} on ${options.host} is already in use (choose another with --port, or --port 0 for a free one)`));
      else if (err.code === "EACCES") reject(new StartupError(`not allowed to listen on ${options.host}:${options.port}`));
      else if (err.code === "EADDRNOTAVAIL" || err.code === "ENOTFOUND") reject(new StartupError(`cannot listen on ${options.host}: no such local address`));
      else reject(err);
    };
    http.once("error", onError);
    http.listen(options.port, options.host, () => {
      http.off("error", onError);
      resolve();
    });
  });
  const address = http.address() as AddressInfo;
  const hostForUrl = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const url = `${tls ? "https" : "http"}://${hostForUrl}:${address.port}`;
  hybrid.setServerUrl(url);

  // Sessions that end with the server end in the host too, hybrid records included (they would keep it running).
  const forgetInHost = () => {
    for (const session of registry.list()) host?.forget(session.id);
  };
  let closing: Promise<void> | null = null;
  const close = () =>
    (closing ??= (async () => {
      offRevoked();
      offSettings();
      offLoggedOut();
      sessionList.close();
      settingsStream.close();
      agentSockets.closeAll();
      acceptor.closeAll(1001, "server shutting down");
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections?.();
      });
      await hybrid.close(host !== null && !options.stopSessionsOnExit);
      if (host && !options.stopSessionsOnExit) registry.releaseAll();
      else {
        forgetInHost();
        await registry.closeAll();
      }
      host?.close();
      agent.close();
      tokens.flush();
    })());

  let aborting: Promise<void> | null = null;
  const abort = () =>
    (aborting ??= (async () => {
      // The process is in an unknown state: drop connections rather than close them politely.
      acceptor.terminateAll();
      http.closeAllConnections?.();
      http.close();
      // Sessions in a session host survive a crash of the server: that is what it is for.
      if (host && !options.stopSessionsOnExit) {
        await hybrid.close(true).catch(() => {});
        registry.releaseAll();
        host.close();
      } else {
        forgetInHost();
        await Promise.allSettled([hybrid.close(), registry.closeAll()]);
      }
    })());

  return { url, host: options.host, port: address.port, token, tokenGenerated, registry, settings, acceptor, terminals, hybrid, agent, http, get hostLink() {
    return host?.current ?? null;
  }, close, abort };
}

function startupErrorOf(err: unknown, dataDir: string): unknown {
  if (err instanceof HostRefusedError && err.reason === Refusal.PROTOCOL) return new StartupError(protocolMismatchLine(dataDir, err, "it still speaks its own protocol after the handover"));
  if (err instanceof HostRefusedError || err instanceof HostStartError || err instanceof HostDirError) return new StartupError(`session host: ${err.message}`);
  return err;
}

/**
 * A host of another build holds the data dir's sessions and could not hand them over. They are
 * never ended for an upgrade: the server says so and does not start (docs/design.md, What survives a restart).
 */
function protocolMismatchLine(dataDir: string, err: HostRefusedError, why: string): string {
  return `the session host of ${dataDir} is ${err.build} (host protocol ${err.protocol}), this server ${WEBMUX_BUILD} speaks ${SPOKEN_HOST_PROTOCOL} and the host could not hand its sessions over (${why}): its sessions keep running there; serve them with the webmux that started it, or end them with that build's webmux stop`;
}

function handedOverLine(dataDir: string, err: HostRefusedError, handed: HandedOver): string {
  const what = handed.sessions === 1 ? "1 session" : `${handed.sessions} sessions`;
  return `webmux: the session host of ${dataDir} was ${err.build} (host protocol ${err.protocol}); it handed ${what} over to a session host of this build (pid ${handed.pid})`;
}

/** A hybrid session taken over from the session host, with its record, before its HybridSession exists. */
type AdoptedHybrid = { session: Session; record: HybridRecord; info: { current: () => HybridInfo } };

/**
 * The sessions the host kept while no server ran, back in the registry with their ids and
 * generations; a shell with integration keeps its nonce, and where it was is returned for the
 * Agent API (a command still running there is waited for).
 */
function adoptSessions(registry: SessionRegistry, integration: ShellIntegration, adopted: AdoptedRun[]): { shells: Map<string, ResumedShell>; hybrids: AdoptedHybrid[] } {
  const shells = new Map<string, ResumedShell>();
  const hybrids: AdoptedHybrid[] = [];
  for (const a of adopted) {
    const record = a.hybridState ? readHybridRecord(a.hybridState) : null;
    // A session that never started a run has nothing to resume, unless it is a conversation parked at its chat end.
    if (!a.run && !record) continue;
    const shell = a.run?.shell;
    const integrated = shell ? integratedShellOf(a.command) : null;
    if (a.run && shell && integrated && a.run.status === "running") {
      integration.adopt(a.id, integrated.shell, shell.nonce);
      shells.set(a.id, { phase: shell.phase, command: shell.command, startedAt: shell.startedAt });
    }
    const info = record ? { current: () => savedInfo(record) } : null;
    const session = registry.adopt({
      id: a.id,
      command: a.command,
      cwd: a.cwd,
      env: a.env,
      cols: a.cols,
      rows: a.rows,
      title: a.title,
      ...(info ? { hybrid: () => info.current() } : {}),
      adopt: a.run
        ? {
            createdAt: a.createdAt,
            generation: a.run.generation,
            start: a.run.start,
            bytes: a.bytes,
            modes: a.run.modes,
            pty: a.pty,
            exitCode: a.run.exitCode,
            submissions: a.submissions,
          }
        : { createdAt: a.createdAt, generation: record!.generation, start: 0, bytes: new Uint8Array(0), modes: "", pty: null, exitCode: null, submissions: a.submissions },
    });
    if (a.seat) session.setRemoteSeat(a.seat);
    if (record && info) hybrids.push({ session, record, info });
  }
  return { shells, hybrids };
}
