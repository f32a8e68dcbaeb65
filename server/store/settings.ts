import { join } from "node:path";
import type { Settings } from "../contract/types.ts";
import { Emitter } from "../session/emitter.ts";
import { JsonFile } from "./json-file.ts";

export const DEFAULT_SETTINGS: Settings = { open_api: { enabled: false } };

/** Server settings, persisted in the data dir; every change is announced (for /ws/settings). */
export class SettingsStore {
  readonly events = new Emitter<{ changed: [settings: Settings] }>();
  private readonly file: JsonFile<Partial<Settings>>;
  private current: Settings;

  constructor(dataDir: string) {
    this.file = new JsonFile<Partial<Settings>>(join(dataDir, "settings.json"), () => ({}));
    this.current = normalize(this.file.read());
  }

  get(): Settings {
    return structuredClone(this.current);
  }

  /** Apply a validated change, persist it (throws and changes nothing if the write fails), then announce it. */
  update(change: { open_api?: { enabled?: boolean } }): Settings {
    const next = structuredClone(this.current);
    if (change.open_api?.enabled !== undefined) next.open_api.enabled = change.open_api.enabled;
    this.file.write(next);
    this.current = next;
    this.events.emit("changed", this.get());
    return this.get();
  }
}

function normalize(stored: Partial<Settings>): Settings {
  const out = structuredClone(DEFAULT_SETTINGS);
  if (typeof stored?.open_api?.enabled === "boolean") out.open_api.enabled = stored.open_api.enabled;
  return out;
}
