import fs from "node:fs";

/** Whether a process is running. A zombie (exited, waiting to be reaped) is not. */
export function isRunning(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    // Field 3 is the state; the command name before it is in parentheses and may contain spaces.
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    if (fs.existsSync("/proc/self/stat")) return false;
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }
}

/** Waits until the process is gone; false if it still runs after `boundMs` (a generous bound, not a timing claim). */
export async function waitUntilGone(pid: number, boundMs = 5_000): Promise<boolean> {
  const deadline = Date.now() + boundMs;
  while (Date.now() < deadline) {
    if (!isRunning(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return !isRunning(pid);
}

export async function waitForFile(file: string, boundMs = 10_000): Promise<string> {
  const deadline = Date.now() + boundMs;
  while (Date.now() < deadline) {
    const text = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "";
    if (text.endsWith("\n")) return text.trim();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`${file} was not written`);
}

/** Ends a process a test started and could not otherwise clean up. */
export function killIfRunning(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // already gone
  }
}
