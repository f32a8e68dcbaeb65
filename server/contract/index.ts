/** The contract shared by server, client and CLI. Pure: no node:, Bun or DOM. */
export * from "./types.ts";
export * from "./protocol.ts";
export * from "./payloads.ts";
export * from "./frames.ts";
export * from "./session-list.ts";
export * from "./settings-stream.ts";
export { encodeUtf8, decodeUtf8Strict } from "./utf8.ts";
export * from "./stream-tracker.ts";
export * from "./reconnect.ts";
export * from "./terminal-query.ts";
export * from "./unreachable.ts";
