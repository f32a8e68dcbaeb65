/**
 * The floor under any out-of-process terminal server's echo latency: a process that does nothing
 * but echo each WebSocket message back, on the same machine, measured like the real arms. A
 * keystroke through webmux costs at least this plus the PTY's own round trip; on a virtual
 * machine the two wake-ups of this hop can cost as much as the whole direct PTY round trip.
 */
import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import WebSocket from "ws";
import { withTimeout } from "./wait.ts";

const START_TIMEOUT_MS = 15_000;
const SELF = fileURLToPath(import.meta.url);
const RUN_TS = fileURLToPath(new URL("../bin/run-ts.js", import.meta.url));

export type EchoFloor = {
  send(key: string): void;
  subscribe(listener: (data: Uint8Array) => void): void;
  stop(): Promise<void>;
};

/** Start the echo process and connect to it. */
export async function startEchoFloor(): Promise<EchoFloor> {
  const child: ChildProcess = fork(RUN_TS, [SELF, "--serve"], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const port = await withTimeout(
    new Promise<number>((resolve) => child.once("message", (m) => resolve((m as { port: number }).port))),
    START_TIMEOUT_MS,
    "echo floor server",
  );
  const ws = new WebSocket(`ws://127.0.0.1:${port}/`, { perMessageDeflate: false });
  await withTimeout(new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject)), START_TIMEOUT_MS, "echo floor connect");
  const listeners: Array<(data: Uint8Array) => void> = [];
  // Frames as webmux's: opcode 0x00, then the bytes.
  ws.on("message", (data: Buffer) => {
    for (const listener of listeners) listener(data.subarray(1));
  });
  return {
    send: (key) => ws.send(Buffer.from([0, ...Buffer.from(key)])),
    subscribe: (listener) => void listeners.push(listener),
    async stop() {
      ws.terminate();
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill();
      await exited;
    },
  };
}

async function serve(): Promise<void> {
  const { WebSocketServer } = await import("ws");
  const wss = new WebSocketServer({ host: "127.0.0.1", port: 0, perMessageDeflate: false });
  wss.on("connection", (socket) => socket.on("message", (data: Buffer) => socket.send(data)));
  wss.on("listening", () => {
    const address = wss.address();
    process.send?.({ port: typeof address === "object" && address ? address.port : 0 });
  });
  process.on("disconnect", () => process.exit(0));
}

if (process.argv.includes("--serve")) void serve();
