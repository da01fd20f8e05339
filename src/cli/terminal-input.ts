import { closeSync, openSync } from "node:fs";
import { isatty, ReadStream } from "node:tty";
import type { InputStream } from "./io.js";

/**
 * The controlling terminal as an input stream, when stdin is taken by a pipe (`git diff | statecraft run …`) but a
 * person is still at a terminal: permission questions are asked there, as `git add -p` or `sudo` do. Undefined
 * when the process has no terminal (CI, a service).
 */
export function openControllingTerminal(): (InputStream & { destroy(): void }) | undefined {
  let fd: number | undefined;
  try {
    fd = openSync("/dev/tty", "r");
    if (!isatty(fd)) {
      closeSync(fd);
      return undefined;
    }
    return new ReadStream(fd);
  } catch {
    if (fd !== undefined) closeSync(fd);
    return undefined;
  }
}
