import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import type { WebSocket } from "ws";
import { Emitter } from "../session/emitter.ts";
import { Session } from "../session/session.ts";
import { fakePtys } from "../testing/fake-pty.ts";
import { ChatConnection } from "./chat-connection.ts";
import { ChatJournal } from "./chat-journal.ts";
import { ChatRoom, MAX_EARLY_FRAMES } from "./chat-room.ts";
import type { HybridSession } from "./hybrid-session.ts";

/** A socket that records what the room sends. */
class RecordingSocket extends EventEmitter {
  readonly sent: string[] = [];
  bufferedAmount = 0;
  send(text: string): void {
    this.sent.push(text);
  }
  close(): void {}
  terminate(): void {}
}

/** A hybrid session whose attach waits for `release` (a move or a transcript read under way). */
function slowAttachRoom() {
  let release!: (attachable: boolean) => void;
  const attachable = new Promise<boolean>((resolve) => (release = resolve));
  const sends: string[] = [];
  const hybrid = {
    journal: new ChatJournal(),
    events: new Emitter(),
    agent: "claude",
    conversation: "conv-1",
    currentEnd: "chat",
    caps: { permissions: true, interrupt: true },
    chatAttachable: () => attachable,
    chatClientJoined: () => {},
    chatClientLeft: () => {},
    send: (_client: string, id: string) => sends.push(id),
    rejectSend: () => {},
  } as unknown as HybridSession;
  // A real session core on a fake PTY: the room reports its connections through session.connect.
  const session = new Session({ id: "s1", command: ["agent"], cwd: "/", env: {}, cols: 80, rows: 24, bufferBytes: 64 * 1024, spawnPty: fakePtys().spawn, nextGeneration: () => "boot.1" });
  const room = new ChatRoom(hybrid, session);
  const ws = new RecordingSocket();
  const conn = new ChatConnection(ws as unknown as WebSocket, "client-a-0001", "phone", true, (c) => room.detach(c));
  return { room, conn, ws, sends, release };
}

const send = (id: string) => JSON.stringify({ type: "send", id, text: `say ${id}` });

describe("ChatRoom", () => {
  it("handles sends that arrived before the attach finished, in order, after hello and snapshot", async () => {
    const { room, conn, ws, sends, release } = slowAttachRoom();
    const attached = room.attach(conn, null);
    room.handleText(conn, send("early-000001"));
    room.handleText(conn, send("early-000002"));
    expect(sends).toEqual([]);
    release(true);
    await attached;
    expect(sends).toEqual(["early-000001", "early-000002"]);
    expect(ws.sent.map((t) => JSON.parse(t).type).slice(0, 3)).toEqual(["hello", "control", "snapshot"]);
  });

  it("drops what came early when the session moved away meanwhile, and holds at most MAX_EARLY_FRAMES", async () => {
    const moved = slowAttachRoom();
    const a = moved.room.attach(moved.conn, null);
    moved.room.handleText(moved.conn, send("early-000001"));
    moved.release(false);
    await a;
    expect(moved.sends).toEqual([]);

    const flood = slowAttachRoom();
    const b = flood.room.attach(flood.conn, null);
    for (let i = 0; i < MAX_EARLY_FRAMES + 10; i++) flood.room.handleText(flood.conn, send(`flood-${String(i).padStart(6, "0")}`));
    flood.release(true);
    await b;
    expect(flood.sends).toHaveLength(MAX_EARLY_FRAMES);
    // Once joined, frames are handled at once.
    flood.room.handleText(flood.conn, send("after-000001"));
    expect(flood.sends.at(-1)).toBe("after-000001");
  });
});
