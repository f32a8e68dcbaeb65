import { readFileSync } from "node:fs";

/** Whether a process is running; a zombie (dead, not yet reaped by its parent) counts as gone. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return false;
  }
}
