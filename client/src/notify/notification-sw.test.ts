/**
 * public/notification-sw.js, the service worker's notificationclick, run against fake window
 * clients: the real file's text, evaluated with a stand-in for the worker's `self`.
 */
import { describe, expect, it } from "vitest";
import source from "../../../public/notification-sw.js?raw";
import { OPEN_SESSION_MESSAGE } from "./attention-watcher.ts";

const ORIGIN = "https://webmux.test";

type FakeWindow = {
  url: string;
  focused: boolean;
  visibilityState: "visible" | "hidden";
  focus(): Promise<FakeWindow>;
  postMessage(message: unknown): void;
  messages: unknown[];
  focusCalls: number;
};

function fakeWindow(path: string, options: { focused?: boolean; visible?: boolean; refuseFocus?: boolean } = {}): FakeWindow {
  const win: FakeWindow = {
    url: ORIGIN + path,
    focused: options.focused ?? false,
    visibilityState: options.visible ? "visible" : "hidden",
    messages: [],
    focusCalls: 0,
    focus: async () => {
      win.focusCalls++;
      if (options.refuseFocus) throw new Error("InvalidAccessError: not allowed to focus");
      return win;
    },
    postMessage: (message) => void win.messages.push(message),
  };
  return win;
}

type ClickEvent = { notification: { data: unknown; close(): void }; waitUntil(promise: Promise<unknown>): void };

/** Loads the add-on into a fake worker scope; returns a function that taps a notification. */
function loadWorker(windows: FakeWindow[]) {
  const listeners = new Map<string, (event: ClickEvent) => void>();
  const opened: string[] = [];
  const self = {
    location: { origin: ORIGIN },
    addEventListener: (type: string, listener: (event: ClickEvent) => void) => listeners.set(type, listener),
    clients: {
      matchAll: async (query: { type: string; includeUncontrolled: boolean }) => {
        expect(query).toEqual({ type: "window", includeUncontrolled: true });
        return windows;
      },
      openWindow: async (url: string) => void opened.push(url),
    },
  };
  new Function("self", source)(self);
  async function tap(data: unknown): Promise<{ closed: boolean }> {
    let closed = false;
    let work: Promise<unknown> = Promise.resolve();
    listeners.get("notificationclick")!({ notification: { data, close: () => (closed = true) }, waitUntil: (p) => (work = p) });
    await work;
    return { closed };
  }
  return { tap, opened };
}

describe("notificationclick", () => {
  it("focuses a window already showing the session, and tells nobody to navigate", async () => {
    const list = fakeWindow("/");
    const showing = fakeWindow("/s/abcd1234");
    const worker = loadWorker([list, showing]);
    expect(await worker.tap({ url: "/s/abcd1234" })).toEqual({ closed: true });
    expect(showing.focusCalls).toBe(1);
    expect([list.messages, showing.messages, worker.opened]).toEqual([[], [], []]);
  });

  it("tells the focused window of the app to open the session", async () => {
    const background = fakeWindow("/settings");
    const focused = fakeWindow("/s/zzzz9999", { focused: true, visible: true });
    const worker = loadWorker([background, focused]);
    await worker.tap({ sessionId: "abcd1234", url: "/s/abcd1234" });
    expect(focused.messages).toEqual([{ type: OPEN_SESSION_MESSAGE, path: "/s/abcd1234" }]);
    expect(background.messages).toEqual([]);
    expect(worker.opened).toEqual([]);
  });

  it("still tells the window when focusing it is refused", async () => {
    const only = fakeWindow("/", { refuseFocus: true });
    const worker = loadWorker([only]);
    await worker.tap({ url: "/s/abcd1234" });
    expect(only.messages).toEqual([{ type: OPEN_SESSION_MESSAGE, path: "/s/abcd1234" }]);
  });

  it("opens a new window when the app has none", async () => {
    const worker = loadWorker([]);
    await worker.tap({ url: "/s/abcd1234" });
    expect(worker.opened).toEqual([`${ORIGIN}/s/abcd1234`]);
  });

  it("opens a hybrid session's chat when the notification leads there", async () => {
    const worker = loadWorker([]);
    await worker.tap({ url: "/s/abcd1234/chat" });
    expect(worker.opened).toEqual([`${ORIGIN}/s/abcd1234/chat`]);
  });

  it("opens the session list for data that is not a session path", async () => {
    for (const data of [null, { url: "https://elsewhere.test/s/abcd1234" }, { url: "/s/../api/tokens" }, { url: "/s/abcd1234/tokens" }]) {
      const worker = loadWorker([]);
      await worker.tap(data);
      expect(worker.opened).toEqual([`${ORIGIN}/`]);
    }
  });
});
