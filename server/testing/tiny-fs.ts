import { execFileSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A filesystem this small fills in a moment, yet holds webmux's few small JSON files. */
export const TINY_FS_BYTES = 1024 * 1024;

/**
 * A real, tiny filesystem (tmpfs) for disk-fault tests: full means a real ENOSPC from the kernel,
 * read-only a real EROFS, through the server's ordinary fs calls — no fake fs, no test seam.
 * Needs `mount` (root, or CAP_SYS_ADMIN); `TinyFs.mount` returns null where that is not allowed.
 */
export class TinyFs {
  private constructor(readonly dir: string) {}

  static mount(): TinyFs | null {
    const dir = mkdtempSync(join(tmpdir(), "webmux-tinyfs-"));
    try {
      execFileSync("mount", ["-t", "tmpfs", "-o", `size=${TINY_FS_BYTES},mode=0700`, "tmpfs", dir], { stdio: "ignore" });
    } catch {
      rmSync(dir, { recursive: true, force: true });
      return null;
    }
    return new TinyFs(dir);
  }

  private get filler(): string {
    return join(this.dir, ".filler");
  }

  /** Fill every free byte: the next write of any file fails with ENOSPC. */
  fill(): void {
    const fd = openSync(this.filler, "a");
    try {
      for (const size of [64 * 1024, 4096, 512, 64, 1]) {
        const chunk = Buffer.alloc(size, 0x2e);
        for (;;) {
          try {
            if (writeSync(fd, chunk) < size) break;
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code === "ENOSPC") break;
            throw err;
          }
        }
      }
    } finally {
      closeSync(fd);
    }
  }

  /** Give the space back. */
  free(): void {
    rmSync(this.filler, { force: true });
  }

  /** Remount read-only (root ignores permission bits, but not EROFS). */
  readOnly(): void {
    execFileSync("mount", ["-o", "remount,ro", this.dir], { stdio: "ignore" });
  }

  unmount(): void {
    try {
      execFileSync("umount", [this.dir], { stdio: "ignore" });
    } finally {
      rmSync(this.dir, { recursive: true, force: true });
    }
  }
}
