/**
 * Messages between the main thread (headless-screen.ts, headless-worker-host.ts) and
 * the shared headless-terminal worker (headless-worker.js). Types only: the worker is
 * plain JavaScript so that it loads without a TypeScript loader (Node + tsx, vitest,
 * Bun), and refers to these types from JSDoc.
 *
 * Every message names the screen it is for by `screen` (an id unique within one
 * worker). Messages for one screen are handled strictly in the order they were posted.
 */

export type ScreenSize = { cols: number; rows: number };

export type ReadResult = {
  /** the visible screen, one string per row, right-trimmed (with SGR escapes when `styled`, see styled-line.js) */
  lines: string[];
  /** the last N lines of the normal buffer's scrollback, oldest first, right-trimmed */
  scrollback: string[];
  /** 0-based: `lines[cursor.row]` is the cursor's row */
  cursor: { row: number; col: number };
};

export type ScreenRequest =
  | { kind: "serialize"; scrollback?: number }
  | { kind: "preview" }
  | { kind: "read"; scrollback: number; styled: boolean };

export type ScreenReply = {
  serialize: string;
  preview: string[];
  read: ReadResult;
};

export type ToWorker =
  | ({ type: "open"; screen: number; scrollback: number } & ScreenSize)
  /** `gap`: bytes were dropped before this batch; reset the terminal before parsing it */
  | { type: "write"; screen: number; data: Uint8Array; gap: boolean }
  | ({ type: "resize"; screen: number } & ScreenSize)
  | { type: "reset"; screen: number }
  | { type: "request"; screen: number; request: number; body: ScreenRequest }
  | { type: "close"; screen: number };

export type FromWorker =
  /** bytes parsed since the last progress message, per screen: [screen, bytes] pairs */
  | { type: "parsed"; counts: Array<[number, number]> }
  /** the visible text of a screen changed (throttled by the worker) */
  | { type: "changed"; screen: number }
  /** closed screens' memory was collected: the C heap's free pages may go back to the OS */
  | { type: "released" }
  | { type: "reply"; request: number; ok: true; value: unknown }
  | { type: "reply"; request: number; ok: false; message: string };
