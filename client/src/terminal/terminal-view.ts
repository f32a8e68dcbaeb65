/**
 * A live terminal: xterm.js in a host element, fed by a TerminalConnection, restored from and
 * saved to its IndexedDB copy. Everything the page shows about it is a Solid accessor. Create it
 * inside a Solid owner; it disposes itself on cleanup.
 *
 * Frames, in the order the server sends them on attach: 0x06 control (grid, controller, 2031),
 * 0x04 position (reset: a 0x01 snapshot follows, written after RIS; append: the missing 0x00 bytes
 * follow), 0x02 status, pending 0x05, 0x03 exit. Every write to xterm goes through its write queue
 * so the screen, the grid and the rendered offset change in stream order.
 */
import { createEffect, createSignal, on, onCleanup, type Accessor } from "solid-js";
import type { ServerMessage } from "../../../server/contract/frames.ts";
import type { TerminalViewStats } from "./debug-types.ts";
import { colorSchemeReport } from "../../../server/contract/protocol.ts";
import type { ControlPayload, SessionInfo, SubmitStatusPayload } from "../../../server/contract/types.ts";
import { ApiError, type Api } from "../api.ts";
import { forgetScreen, loadScreen } from "../storage/screen-store.ts";
import { makeTerminalConnection, type ConnectionPhase, type ProbeResult, type TerminalConnection } from "./connection.ts";
import { routeTerminalData } from "./input-source.ts";
import { ringToPlainText } from "./plain-text.ts";
import { makeReplayWriter } from "./replay-writer.ts";
import { copyBytes, createScreenSaver } from "./screen-saver.ts";
import { terminalTheme } from "./themes.ts";
import { makeTouchScroll } from "./touch-scroll.ts";
import { screenCells } from "../../../server/vt/screen-cells.ts";
import { TerminalGrid } from "./terminal-grid.ts";
import { createXterm, searchDecorations } from "./xterm-setup.ts";
import { unreachable } from "../../../server/contract/unreachable.ts";

/** A replay written faster than this shows no overlay: it would only flicker. */
export const OVERLAY_DELAY_MS = 150;

export type TerminalViewOptions = {
  sessionId: string;
  clientId: string;
  label: Accessor<string>;
  dark: Accessor<boolean>;
  host: HTMLElement;
  api: Api;
};


export type TerminalView = {
  phase: Accessor<ConnectionPhase>;
  control: Accessor<ControlPayload | null>;
  session: Accessor<SessionInfo | null>;
  isController: Accessor<boolean>;
  /** a full replay is being written: cover the terminal */
  replaying: Accessor<boolean>;
  /**
   * a whole screen (replay or local copy) is being written: keep the terminal out of the viewport,
   * which pauses xterm's renderer (it watches its own visibility) so the parse runs at full speed
   */
  writingScreen: Accessor<boolean>;
  exitCode: Accessor<number | null>;
  takeControl(): void;
  restart(): Promise<void>;
  copyAll(): Promise<string>;
  find(term: string, direction: "next" | "previous"): boolean;
  clearFind(): void;
  focus(): void;
  /** submission status frames (0x05), for the compose box */
  onSubmitStatus(listener: (status: SubmitStatusPayload) => void): () => void;
  /** rewrite typed input (strings only) before it is sent; null removes the filter */
  setInputFilter(filter: ((data: string) => string) | null): void;
  /** paste as the user would (bracketed when the program asked for it) */
  paste(text: string): void;
  /** send key bytes as user input (0x00) */
  sendKeys(data: string): void;
  /** the text of the whole active buffer, scrollback included */
  text(): string;
  /** every cell on show and in the history, the cursor and the modes, one line per fact (server/vt/screen-cells.ts) */
  cells(): string[];
  /** the selected text (find selects its match) */
  selection(): string;
  stats(): TerminalViewStats;
  /** simulate a lost network connection */
  drop(): void;
  connection(): TerminalConnection | null;
};

export function createTerminalView(options: TerminalViewOptions): TerminalView {
  const { sessionId, clientId, api } = options;
  const { terminal, fit, search } = createXterm(options.dark());
  const saver = createScreenSaver({ sessionId, terminal, unfinishedTail: () => writer.unfinishedTail() });

  const [phase, setPhase] = createSignal<ConnectionPhase>({ phase: "connecting", attempt: 0 });
  const [control, setControl] = createSignal<ControlPayload | null>(null);
  const [session, setSession] = createSignal<SessionInfo | null>(null);
  const [replaying, setReplaying] = createSignal(false);
  const [writingReplay, setWritingReplay] = createSignal(false);
  const [writingCopy, setWritingCopy] = createSignal(false);
  const writingScreen = () => writingReplay() || writingCopy();
  const [exitCode, setExitCode] = createSignal<number | null>(null);
  const isController = () => control()?.controller?.clientId === clientId;

  let connection: TerminalConnection | null = null;
  let disposed = false;
  let renderedOffset: number | null = null;
  let firstPaintMs: number | null = null;
  let awaitingPaint = false;
  let restoredLocally = false;
  let overlayTimer: ReturnType<typeof setTimeout> | null = null;
  /** the first control frame of each socket is its attach */
  let attachedThisSocket = false;
  /** the first status frame of each socket ends its replay */
  let sawStatusThisSocket = false;
  /** this socket's replay has been parsed and acknowledged (0x07): the server takes 0x06 from now on */
  let replayAcknowledged = false;
  /** a colour-scheme report was due before that: it goes out right after the acknowledgement */
  let schemeReportDue = false;
  const submitListeners = new Set<(status: SubmitStatusPayload) => void>();

  const writer = makeReplayWriter(terminal, {
    rendered(generation, offset) {
      renderedOffset = offset;
      saver.rendered({ generation, offset });
    },
    replayParsed(socket) {
      const current = connection;
      if (!current || current.socket !== socket) return;
      current.replayParsed(socket);
      replayAcknowledged = true;
      if (schemeReportDue) {
        schemeReportDue = false;
        reportScheme();
      }
    },
  });

  terminal.open(options.host);
  // Phones: no autocorrect, autocapitalisation or spellcheck on what goes to the program.
  for (const [name, value] of [["autocorrect", "off"], ["autocapitalize", "off"], ["spellcheck", "false"]]) {
    terminal.textarea?.setAttribute(name, value);
  }
  // Phones: a finger drag scrolls the scrollback (xterm.js has no touch scrolling).
  const stopTouchScroll = makeTouchScroll(options.host, terminal);
  const grid = new TerminalGrid(terminal, fit, options.host, {
    isController,
    sendResize: (cols, rows) => connection?.sendResize(cols, rows) ?? false,
  });

  /** The colour-scheme report (0x06); one due before the replay is acknowledged waits for it (the server would drop it). */
  const reportScheme = () => {
    if (replayAcknowledged) connection?.sendAutoReply(colorSchemeReport(options.dark()));
    else schemeReportDue = true;
  };
  // CSI ? 996 n asks for the colour scheme; xterm does not know it, so it is answered here (0x06).
  const schemeQuery = terminal.parser.registerCsiHandler({ prefix: "?", final: "n" }, (params) => {
    if (params[0] !== 996) return false;
    if (!writer.repliesMuted) reportScheme();
    return true;
  });
  /** the key bar's sticky modifiers rewrite the next key typed (see KeyBar) */
  let inputFilter: ((data: string) => string) | null = null;
  const dataRoute = routeTerminalData(terminal, {
    input: (data) => connection?.sendInput(typeof data === "string" && inputFilter ? inputFilter(data) : data),
    reply: (data) => {
      if (!writer.repliesMuted) connection?.sendAutoReply(data);
    },
  });
  const paintWatch = terminal.onRender(() => {
    if (!awaitingPaint) return;
    awaitingPaint = false;
    firstPaintMs ??= performance.now();
  });

  function showOverlaySoon(): void {
    if (overlayTimer !== null) clearTimeout(overlayTimer);
    overlayTimer = setTimeout(() => setReplaying(true), OVERLAY_DELAY_MS);
  }

  function hideOverlay(): void {
    if (overlayTimer !== null) clearTimeout(overlayTimer);
    overlayTimer = null;
    setReplaying(false);
  }

  function onControl(next: ControlPayload): void {
    const wasController = isController();
    setControl(next);
    const attach = !attachedThisSocket;
    attachedThisSocket = true;
    grid.apply(next, !sawStatusThisSocket);
    if (next.colorSchemeReports && (attach || (!wasController && isController()))) reportScheme();
  }

  function onMessage(message: ServerMessage): void {
    const tracker = connection!.tracker;
    switch (message.type) {
      case "control":
        onControl(message.control);
        return;
      case "position":
        replayAcknowledged = false;
        writer.position(message.position);
        if (message.position.mode === "reset") {
          setWritingReplay(true);
          showOverlaySoon();
        }
        return;
      case "snapshot":
        writer.snapshot(message.data, () => {
          setWritingReplay(false);
          hideOverlay();
          awaitingPaint = firstPaintMs === null;
        });
        return;
      case "output":
        writer.output(message.data, tracker.generation!, tracker.offset);
        return;
      case "status":
        if (!sawStatusThisSocket) {
          sawStatusThisSocket = true;
          grid.replayWritten();
        }
        writer.status(connection!.socket);
        setSession(message.session);
        return;
      case "exit":
        setExitCode(message.exitCode);
        return;
      case "submitStatus":
        for (const listener of submitListeners) listener(message.status);
        return;
      default:
        unreachable(message, "server message");
    }
  }

  function onPhase(next: ConnectionPhase): void {
    if (next.phase === "connecting") {
      attachedThisSocket = sawStatusThisSocket = replayAcknowledged = false;
      writer.socketLost();
    }
    // A socket lost between a reset position and its snapshot leaves the old screen in place.
    if (next.phase === "connecting" || next.phase === "waiting" || next.phase === "stopped") {
      setWritingReplay(false);
      hideOverlay();
    }
    if (next.phase === "stopped" && next.reason === "not_found") void forgetScreen(sessionId);
    setPhase(next);
  }

  async function probe(): Promise<ProbeResult> {
    try {
      await api.getSession(sessionId);
      return "ok";
    } catch (error) {
      // A 401 has already sent the app to Login (the Api reports it).
      if (error instanceof ApiError && error.code === "UNAUTHORIZED") return "unauthorized";
      if (error instanceof ApiError && error.code === "NOT_FOUND") return "not_found";
      return "ok";
    }
  }

  async function start(): Promise<void> {
    const stored = await loadScreen(sessionId);
    if (disposed) return;
    if (stored) {
      restoredLocally = true;
      terminal.resize(stored.cols, stored.rows);
      setWritingCopy(true);
      writer.writeCopy(copyBytes(stored), stored.generation, stored.offset, () => {
        setWritingCopy(false);
        awaitingPaint = firstPaintMs === null;
      });
    }
    connection = makeTerminalConnection({
      sessionId,
      clientId,
      label: options.label,
      resume: stored ? { generation: stored.generation, offset: stored.offset } : null,
      onMessage,
      onPhase,
      probe,
    });
  }
  void start();

  createEffect(
    on(
      options.dark,
      (dark) => {
        terminal.options.theme = terminalTheme(dark);
        if (control()?.colorSchemeReports) reportScheme();
      },
      { defer: true },
    ),
  );

  onCleanup(() => {
    disposed = true;
    if (overlayTimer !== null) clearTimeout(overlayTimer);
    connection?.dispose();
    stopTouchScroll();
    saver.dispose();
    grid.dispose();
    schemeQuery.dispose();
    dataRoute.dispose();
    paintWatch.dispose();
    terminal.dispose();
  });

  return {
    phase,
    control,
    session,
    isController,
    replaying,
    writingScreen,
    exitCode,
    takeControl: () => connection?.takeControl(),
    async restart() {
      await api.restartSession(sessionId);
      setExitCode(null);
      connection?.reconnect();
    },
    async copyAll() {
      return ringToPlainText(await api.readBuffer(sessionId), terminal.cols, terminal.rows);
    },
    find(term, direction) {
      const searchOptions = { decorations: searchDecorations(options.dark()) };
      return direction === "next" ? search.findNext(term, searchOptions) : search.findPrevious(term, searchOptions);
    },
    clearFind: () => search.clearDecorations(),
    focus: () => terminal.focus(),
    onSubmitStatus(listener) {
      submitListeners.add(listener);
      return () => submitListeners.delete(listener);
    },
    setInputFilter(filter) {
      inputFilter = filter;
    },
    paste: (text) => terminal.paste(text),
    sendKeys: (data) => void connection?.sendInput(data),
    text() {
      const buffer = terminal.buffer.active;
      const lines: string[] = [];
      for (let y = 0; y < buffer.length; y++) lines.push(buffer.getLine(y)?.translateToString(true) ?? "");
      return lines.join("\n");
    },
    cells: () => screenCells(terminal),
    selection: () => terminal.getSelection(),
    stats: () => ({
      bytesReceived: connection?.stats.bytesReceived ?? 0,
      opens: connection?.stats.opens ?? 0,
      waits: connection?.stats.waits ?? 0,
      generation: connection?.tracker.generation ?? null,
      offset: connection?.tracker.offset ?? 0,
      renderedOffset,
      savedOffset: saver.stats.savedOffset,
      firstPaintMs,
      restoredLocally,
      cols: terminal.cols,
      rows: terminal.rows,
      viewportY: terminal.buffer.active.viewportY,
      baseY: terminal.buffer.active.baseY,
    }),
    drop: () => connection?.drop(),
    connection: () => connection,
  };
}
