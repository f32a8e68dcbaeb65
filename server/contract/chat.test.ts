import { describe, expect, it } from "vitest";
import {
  decodeChatClientMessage,
  decodeChatServerEvent,
  encodeChatClientMessage,
  encodeChatServerEvent,
  type ChatClientMessage,
  type ChatServerEvent,
} from "./chat.ts";
import vectors from "./chat.vectors.json" with { type: "json" };

type Vector = { name: string; value: unknown; text: string };

describe("/ws/s/{id}/chat frames (JSON vectors)", () => {
  it.each(vectors.server as Vector[])("server $name: encodes to the vector and reads back", ({ value, text }) => {
    expect(encodeChatServerEvent(value as ChatServerEvent)).toBe(text);
    expect(decodeChatServerEvent(text)).toEqual(value);
  });

  it.each(vectors.client as Vector[])("client $name: encodes to the vector and reads back", ({ value, text }) => {
    expect(encodeChatClientMessage(value as ChatClientMessage)).toBe(text);
    expect(decodeChatClientMessage(text)).toEqual(value);
  });

  it.each(vectors.decodes as (Vector & { side?: string })[])("$name", ({ text, value, side }) => {
    expect(side === "server" ? decodeChatServerEvent(text) : decodeChatClientMessage(text)).toEqual(value);
  });

  it.each(vectors.invalid as { name: string; text: string; reason: string; id?: string }[])("client refuses $name without throwing", ({ text, reason, id }) => {
    const decoded = decodeChatClientMessage(text);
    expect(decoded).toMatchObject({ type: "invalid", reason });
    expect((decoded as { id?: string }).id).toBe(id);
  });

  it.each(vectors.invalidServer as { name: string; text: string; reason: string }[])("server event with $name is refused", ({ text, reason }) => {
    expect(decodeChatServerEvent(text)).toMatchObject({ type: "invalid", reason });
  });

  it("refuses non-text and never encodes a broken event", () => {
    expect(decodeChatClientMessage(42 as unknown as string)).toMatchObject({ reason: "not_text" });
    expect(() => encodeChatServerEvent({ type: "delta", seq: 1, messageId: "m", part: -1, text: "x" })).toThrow(/part/);
  });
});
