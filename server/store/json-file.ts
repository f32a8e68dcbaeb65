import { mkdirSync, readdirSync, readFileSync, writeFileSync, openSync, fsyncSync, closeSync, renameSync, unlinkSync } from "node:fs";
import { dirname, join, basename } from "node:path";

/**
 * One JSON document in the data dir, written atomically: temp file, fsync, rename,
 * so a crash or a full disk mid-write leaves the previous version intact.
 */
export class JsonFile<T> {
  constructor(
    readonly path: string,
    private readonly fallback: () => T,
  ) {}

  /** The stored value, or the fallback when the file does not exist yet. A corrupt file is an error, never silently replaced. */
  read(): T {
    let text: string;
    try {
      text = readFileSync(this.path, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return this.fallback();
      throw err;
    }
    try {
      return JSON.parse(text) as T;
    } catch (err) {
      throw new Error(`${this.path} is not valid JSON (${(err as Error).message}); fix or remove it`);
    }
  }

  /** Replace the document; throws (leaving the old file untouched) when the write fails. */
  write(value: T): void {
    writeJsonAtomic(this.path, value);
  }
}

/** `writeJsonAtomic`'s temporary files: `.<name>.<pid>.<ms>.tmp`. */
const TEMP_FILE = /^\..+\.(\d{1,10})\.\d{1,16}\.tmp$/;

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Remove the temporary files a process that died mid-write left in `dir` (docs/design.md, What
 * survives a restart). A file of another live process is its write in progress and stays; this
 * process has written nothing yet when it starts, so one bearing its own pid is an earlier
 * process's. Returns the names removed.
 */
export function removeStaleTempFiles(dir: string): string[] {
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return removed;
  }
  for (const name of names) {
    const match = TEMP_FILE.exec(name);
    if (!match) continue;
    const pid = Number(match[1]);
    if (pid !== process.pid && isAlive(pid)) continue;
    try {
      unlinkSync(join(dir, name));
      removed.push(name);
    } catch {
      // gone already, or not ours to remove: it does no harm
    }
  }
  return removed;
}

export function writeJsonAtomic(path: string, value: unknown): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${Date.now()}.tmp`);
  const data = JSON.stringify(value, null, 2) + "\n";
  let fd: number | null = null;
  try {
    fd = openSync(tmp, "w", 0o600);
    writeFileSync(fd, data);
    fsyncSync(fd);
    closeSync(fd);
    fd = null;
    renameSync(tmp, path);
  } catch (err) {
    if (fd !== null) closeSync(fd);
    try {
      unlinkSync(tmp);
    } catch {
      // the temp file may never have been created
    }
    throw err;
  }
  // Make the rename itself durable.
  try {
    const dirFd = openSync(dirname(path), "r");
    try {
      fsyncSync(dirFd);
    } finally {
      closeSync(dirFd);
    }
  } catch {
    // Some filesystems refuse fsync on directories; the rename is still atomic.
  }
}
