/**
 * The session host's directory inside the data dir (docs/design.md, What survives a restart): its
 * Unix socket, the secret a peer must present, the start-up lock and the log. The directory is
 * 0700 and the socket and secret 0600, so only the user who owns the data dir can reach the host;
 * the secret is a second check where file modes are not enough (Node cannot read SO_PEERCRED).
 */
import { randomBytes } from "node:crypto";
import { chmodSync, closeSync, lstatSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const HOST_DIR_NAME = "host";
/** Bytes of randomness in the host secret. */
const SECRET_BYTES = 32;
/** Linux's sun_path holds 108 bytes with the terminating NUL. */
const MAX_SOCKET_PATH_BYTES = 107;
/** A start-up lock older than this belongs to a host that hung while starting: it is taken over. */
export const STALE_LOCK_MS = 30_000;

export type HostPaths = {
  dir: string;
  socket: string;
  secret: string;
  /** held only while a host starts, so two racing hosts cannot both listen */
  lock: string;
  log: string;
  /** where the host takes handed terminal streams (docs/design.md, The session host serves the streams) */
  streams: string;
};

/** The host's directory is unusable (wrong owner, modes, a file in its place). */
export class HostDirError extends Error {}

export function hostPaths(dataDir: string): HostPaths {
  const dir = join(dataDir, HOST_DIR_NAME);
  return { dir, socket: join(dir, "host.sock"), secret: join(dir, "host.secret"), lock: join(dir, "host.lock"), log: join(dir, "host.log"), streams: join(dir, "streams.sock") };
}

/** Create the directory 0700 (or check an existing one is ours and private) and return its paths. */
export function prepareHostDir(dataDir: string): HostPaths {
  const paths = hostPaths(dataDir);
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw new HostDirError(`cannot create ${paths.dir}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  checkPrivateDir(paths.dir);
  return paths;
}

/** The directory must be a real directory of this user; its modes are made 0700 if they were wider. */
export function checkPrivateDir(dir: string): void {
  const st = lstatSync(dir);
  if (!st.isDirectory()) throw new HostDirError(`${dir} is not a directory`);
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) throw new HostDirError(`${dir} belongs to uid ${st.uid}, not to this user (uid ${uid})`);
  if ((st.mode & 0o077) !== 0) chmodSync(dir, 0o700);
}

/**
 * A path to bind or connect the socket at: the real one, or, when it is longer than a Unix socket
 * path may be, the same file through `/proc/self/fd/<fd of its directory>` (Linux).
 */
export function socketAddress(socketPath: string): string {
  if (Buffer.byteLength(socketPath) <= MAX_SOCKET_PATH_BYTES) return socketPath;
  const slash = socketPath.lastIndexOf("/");
  const dir = socketPath.slice(0, slash);
  let fd = dirFds.get(dir);
  if (fd === undefined) {
    fd = openSync(dir, "r");
    dirFds.set(dir, fd);
  }
  const short = `/proc/self/fd/${fd}${socketPath.slice(slash)}`;
  if (Buffer.byteLength(short) > MAX_SOCKET_PATH_BYTES) throw new HostDirError(`the socket path ${socketPath} is too long`);
  return short;
}
const dirFds = new Map<string, number>();

/** A fresh secret, written 0600 (atomically: a peer never reads half of one). */
export function writeSecret(paths: HostPaths): string {
  const secret = randomBytes(SECRET_BYTES).toString("base64url");
  const temporary = `${paths.secret}.${process.pid}`;
  writeFileSync(temporary, secret, { mode: 0o600 });
  renameSync(temporary, paths.secret);
  return secret;
}

/** The secret of the running host, or null when there is none (or it is not private to this user). */
export function readSecret(paths: HostPaths): string | null {
  try {
    const st = statSync(paths.secret);
    const uid = process.getuid?.();
    if ((uid !== undefined && st.uid !== uid) || (st.mode & 0o077) !== 0) return null;
    return readFileSync(paths.secret, "utf8").trim() || null;
  } catch {
    return null;
  }
}

/**
 * Take the start-up lock: true when taken. A lock of a process that no longer exists, or older
 * than STALE_LOCK_MS, is taken over.
 */
export function takeStartLock(paths: HostPaths, now = Date.now()): boolean {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(paths.lock, "wx", 0o600);
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    if (!lockIsStale(paths.lock, now)) return false;
    try {
      unlinkSync(paths.lock);
    } catch {
      // another host took it over first
    }
  }
  return false;
}

export function releaseStartLock(paths: HostPaths): void {
  try {
    if (readFileSync(paths.lock, "utf8").trim() === String(process.pid)) unlinkSync(paths.lock);
  } catch {
    // gone already
  }
}

function lockIsStale(lock: string, now: number): boolean {
  try {
    const pid = Number(readFileSync(lock, "utf8").trim());
    if (now - statSync(lock).mtimeMs > STALE_LOCK_MS) return true;
    if (!Number.isInteger(pid) || pid <= 0) return true;
    return !processExists(pid);
  } catch {
    return true;
  }
}

/** Whether a process with this pid exists (it may belong to another user). */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
