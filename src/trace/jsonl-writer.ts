import { closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import { dirname } from "node:path";

const FLUSH_CHARS = 64 * 1024;
const FLUSH_LINES = 256;

/** Writers with unflushed lines, flushed synchronously if the process exits (a crash never loses written lines). */
const open = new Set<JsonlWriter>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const writer of open) writer.close();
  });
}

/**
 * Appends JSON lines to a file. Lines are buffered and written whole, in one write per batch: at the next
 * quiescent point (setImmediate), once 256 lines or 64 KB are waiting, on `flush()` and on `close()`. A write failure is reported once through
 * `onError` and never thrown into the run; later lines are dropped and the failure says so.
 */
export class JsonlWriter {
  private fd: number | undefined;
  private buffer: string[] = [];
  private bufferedChars = 0;
  private scheduled = false;
  private failed = false;
  private closed = false;

  constructor(
    readonly path: string,
    private readonly onError: (error: Error) => void = () => {},
  ) {
    installExitHook();
  }

  /** Queues one line (already serialised). */
  writeLine(line: string): void {
    if (this.failed || this.closed) return;
    this.buffer.push(line);
    this.bufferedChars += line.length + 1;
    open.add(this);
    // A run of instant steps never lets the event loop turn: flush by size too, so a long run's lines reach the
    // file as it goes (a killed process loses at most this much) and the buffer stays small.
    if (this.bufferedChars >= FLUSH_CHARS || this.buffer.length >= FLUSH_LINES) {
      this.flush();
      return;
    }
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        this.flush();
      });
    }
  }

  write(value: unknown): void {
    this.writeLine(JSON.stringify(value));
  }

  flush(): void {
    if (this.buffer.length === 0 || this.failed) return;
    const chunk = this.buffer.join("\n") + "\n";
    this.buffer = [];
    this.bufferedChars = 0;
    try {
      if (this.fd === undefined) {
        mkdirSync(dirname(this.path), { recursive: true });
        this.fd = openSync(this.path, "a");
      }
      writeSync(this.fd, chunk);
    } catch (error) {
      this.failed = true;
      this.onError(new Error(`could not write ${this.path}: ${(error as Error).message}; later lines of this run are not recorded`));
    }
  }

  close(): void {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    open.delete(this);
    if (this.fd !== undefined) {
      try {
        closeSync(this.fd);
      } catch {
        // already closed by the OS at exit; nothing is lost since every line was written whole
      }
      this.fd = undefined;
    }
  }
}
