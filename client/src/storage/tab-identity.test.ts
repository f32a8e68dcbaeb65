import { describe, expect, it, vi } from "vitest";
import { isValidClientId } from "../../../server/contract/protocol.ts";
import { claimTabIdentity, defaultDeviceLabel, loadDeviceLabel, saveDeviceLabel } from "./tab-identity.ts";

/** sessionStorage as a page sees it; `copy()` is what "Duplicate tab" hands the new tab. */
class MemoryStorage implements Storage {
  private items = new Map<string, string>();
  get length() {
    return this.items.size;
  }
  clear() {
    this.items.clear();
  }
  getItem(key: string) {
    return this.items.get(key) ?? null;
  }
  key(index: number) {
    return [...this.items.keys()][index] ?? null;
  }
  removeItem(key: string) {
    this.items.delete(key);
  }
  setItem(key: string, value: string) {
    this.items.set(key, value);
  }
  copy(): MemoryStorage {
    const copy = new MemoryStorage();
    for (const [k, v] of this.items) copy.setItem(k, v);
    return copy;
  }
}

const page = () => new EventTarget() as unknown as Window;

describe("claimTabIdentity", () => {
  it("makes a valid ID for a new tab", () => {
    const identity = claimTabIdentity(new MemoryStorage(), page());
    expect(isValidClientId(identity.clientId)).toBe(true);
    expect(identity.fresh).toBe(true);
  });

  it("keeps the ID across a reload (pagehide removed the live marker)", () => {
    const storage = new MemoryStorage();
    const before = page();
    const first = claimTabIdentity(storage, before);
    before.dispatchEvent(new Event("pagehide"));
    const second = claimTabIdentity(storage, page());
    expect(second).toEqual({ clientId: first.clientId, fresh: false });
  });

  it("gives a duplicated tab (copied storage with the live marker) a new ID", () => {
    const storage = new MemoryStorage();
    const original = claimTabIdentity(storage, page());
    const duplicate = claimTabIdentity(storage.copy(), page());
    expect(duplicate.clientId).not.toBe(original.clientId);
    expect(duplicate.fresh).toBe(true);
  });

  it("sets the marker again when a page comes back from the back/forward cache", () => {
    const storage = new MemoryStorage();
    const target = page();
    const original = claimTabIdentity(storage, target);
    target.dispatchEvent(new Event("pagehide"));
    target.dispatchEvent(new Event("pageshow"));
    expect(claimTabIdentity(storage.copy(), page()).clientId).not.toBe(original.clientId);
  });
});

describe("device label", () => {
  it("defaults to browser and OS", () => {
    expect(defaultDeviceLabel("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Chrome/126.0 Mobile Safari/537.36")).toBe("Chrome on Android");
    expect(defaultDeviceLabel("Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 Version/17.5 Mobile/15E148 Safari/604.1")).toBe("Safari on iOS");
    expect(defaultDeviceLabel("Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:127.0) Gecko/20100101 Firefox/127.0")).toBe("Firefox on Windows");
  });

  it("stores what the server would show and falls back on the default when cleared", () => {
    vi.stubGlobal("navigator", { userAgent: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/126.0 Safari/537.36" });
    const storage = new MemoryStorage();
    expect(saveDeviceLabel("  desk\u0007top  ", storage)).toBe("desktop");
    expect(loadDeviceLabel(storage)).toBe("desktop");
    expect(saveDeviceLabel("x".repeat(60), storage)).toHaveLength(40);
    expect(saveDeviceLabel("   ", storage)).toBe("Chrome on Linux");
    expect(storage.length).toBe(0);
    vi.unstubAllGlobals();
  });
});
