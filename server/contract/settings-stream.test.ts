import { describe, expect, it } from "vitest";
import { decodeSettingsEvent, encodeSettingsEvent } from "./settings-stream.ts";

describe("/ws/settings messages", () => {
  it("encodes the settings event and reads it back, dropping unknown fields", () => {
    const text = encodeSettingsEvent({ type: "settings", settings: { open_api: { enabled: true } } });
    expect(text).toBe('{"type":"settings","settings":{"open_api":{"enabled":true}}}');
    expect(decodeSettingsEvent(text)).toEqual({ type: "settings", settings: { open_api: { enabled: true } } });
    expect(decodeSettingsEvent('{"type":"settings","extra":1,"settings":{"open_api":{"enabled":false,"x":2}}}')).toEqual({
      type: "settings",
      settings: { open_api: { enabled: false } },
    });
  });

  it("refuses what breaks the contract with a stable reason, without throwing", () => {
    expect(decodeSettingsEvent("not json")).toMatchObject({ type: "invalid", reason: "bad_json" });
    expect(decodeSettingsEvent('{"type":"snapshot","settings":{"open_api":{"enabled":true}}}')).toMatchObject({ reason: "bad_payload" });
    expect(decodeSettingsEvent('{"type":"settings","settings":{"open_api":{"enabled":"yes"}}}')).toMatchObject({
      reason: "bad_payload",
      detail: "settings.open_api.enabled: expected a boolean",
    });
    expect(decodeSettingsEvent('{"type":"settings"}')).toMatchObject({ reason: "bad_payload" });
    expect(decodeSettingsEvent(42 as unknown as string)).toMatchObject({ reason: "not_text" });
    expect(() => encodeSettingsEvent({ type: "settings", settings: {} as never })).toThrow(/open_api/);
  });
});
