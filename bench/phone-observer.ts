/**
 * A phone-speed observer: a `/ws/s/{id}` client whose socket is read no faster than a phone on
 * a mobile network would. Reading is throttled below the WebSocket library, on the TCP socket
 * itself (a token bucket: the socket is paused once it is ahead of its budget and resumed when
 * the budget has caught up), so the server sees exactly what a slow link looks like: the kernel's
 * buffers fill, then its own send queue grows, and past its bound it cuts the connection (4408).
 * `ensureAttached` then reconnects with the resume point, as the PWA does.
 */
import type { Socket } from "node:net";
import type { SessionInfo } from "../server/contract/types.ts";
import type { ServerProcess } from "./server-process.ts";
import { TerminalClient } from "./terminal-client.ts";

/** A phone on a middling mobile link: about 2 Mbit/s of terminal stream. */
export const PHONE_BYTES_PER_SEC = 256 * 1024;

/**
 * Read `socket` at no more than `bytesPerSec`. ws pauses and resumes the socket for its own
 * back-pressure; while the throttle holds it paused, those resumes wait for the throttle.
 * Returns a function that lifts the throttle.
 */
export function throttleSocket(socket: Socket, bytesPerSec: number): () => void {
  const resume = socket.resume.bind(socket);
  const startedAt = performance.now();
  let received = 0;
  let holding = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  socket.resume = () => (holding ? socket : resume());
  const onData = (chunk: Buffer) => {
    received += chunk.length;
    const aheadMs = (received / bytesPerSec) * 1000 - (performance.now() - startedAt);
    if (aheadMs <= 0 || holding) return;
    holding = true;
    socket.pause();
    timer = setTimeout(() => {
      holding = false;
      resume();
    }, aheadMs);
  };
  socket.on("data", onData);
  return () => {
    clearTimeout(timer);
    socket.off("data", onData);
    socket.resume = resume;
    holding = false;
    resume();
  };
}

/** How many connections the server counts on a session (SessionInfo.clients). */
export async function sessionClients(server: ServerProcess, sessionId: string): Promise<number> {
  const res = await server.api(`/api/sessions/${sessionId}`);
  if (res.status !== 200) throw new Error(`session ${sessionId}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as SessionInfo).clients;
}

export class PhoneObserver {
  private client: TerminalClient | null = null;
  /** connections made, the first one included */
  connections = 0;
  /** output bytes received over all connections */
  private earlierBytes = 0;

  constructor(
    private readonly server: ServerProcess,
    private readonly sessionId: string,
    private readonly bytesPerSec = PHONE_BYTES_PER_SEC,
  ) {}

  get outputBytes(): number {
    return this.earlierBytes + (this.client?.outputBytes ?? 0);
  }

  /**
   * Attached as far as the server knows, given the session's connection count and how many
   * `others` are attached besides the phone. A cut connection can look open on this side for a
   * long while: its close frame waits behind the data still queued for a reader this slow.
   */
  attached(sessionClients: number, others: number): boolean {
    return this.client !== null && !this.client.closed && sessionClients > others;
  }

  /** Connect, or reconnect with the last resume point when the server no longer counts this phone. */
  async ensureAttached(others: number): Promise<void> {
    if (this.attached(await sessionClients(this.server, this.sessionId), others)) return;
    const previous = this.client;
    this.client = null;
    if (previous) {
      this.earlierBytes += previous.outputBytes;
      await previous.terminate();
    }
    const resume = previous?.generation ? { generation: previous.generation, offset: previous.offset } : {};
    const client = await TerminalClient.connect({ url: this.server.url, token: this.server.token, sessionId: this.sessionId, client: "bench-phone", ...resume });
    this.connections++;
    if (!client.socket) throw new Error("phone observer: no TCP socket after the upgrade");
    throttleSocket(client.socket, this.bytesPerSec);
    this.client = client;
  }

  async stop(): Promise<void> {
    await this.client?.terminate();
    this.client = null;
  }
}
